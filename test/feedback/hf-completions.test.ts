// `POST /v1/complete` from a Hugging Face production checkpoint: a real `flywheel serve` server over a fresh
// database, its warm inference process (formats/hf/serve.py on the hf-venv, transformers: vLLM cannot run here)
// serving two real checkpoint folders (a tiny Llama, and a copy trained a few torch steps), each reply compared with
// a plain greedy decoder on the same folder. A promotion under continuous load, a crash, a refused folder, shutdown.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DbHandle } from '../../db/client';
import { startFeedbackServer, type FeedbackServer } from '../../server/feedback-server';
import { isAlive } from '../../stack/processes';
import { promote } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { referenceCompletions, trainHfCopy, writeHfCheckpoint, type HfCheckpoint } from '../helpers/hf-checkpoint';
import { hfTestPythonPath } from '../helpers/hf-python';
import { freePort } from '../helpers/ports';
import { requires } from '../helpers/requires';
import { makeTinyHfModel } from '../helpers/tiny-hf-model';
import { runCliChild } from '../helpers/serve-child';
import { utf8Prefix } from '../../core/utf8-prefix';

requires('hf');
jest.setTimeout(600_000);

const TOKEN = 'hf-complete-token-7';
const dir = scratchDir('hf-completions');
const TEXT = Array.from({ length: 200 }, (_, i) => `export function f${i}(a, b) {\n  return a * ${i % 7} + b;\n}\n`).join('');
const PROMPTS = ['export function ', 'return a', '}\n'];
const MAX_BYTES = 24;
let db: DbHandle;
let dbUrl: string;
let server: FeedbackServer;
let a: HfCheckpoint;
let b: HfCheckpoint;
/** Checkpoint id → prompt → what a greedy decoder says, cut to MAX_BYTES. */
const expected = new Map<string, Map<string, string>>();
const logged: string[] = [];

const cut = utf8Prefix;

beforeAll(async () => {
  ({ url: dbUrl, handle: db } = await freshDatabase('hf_completions'));
  const base = makeTinyHfModel(path.join(dir, 'base'), { text: TEXT, seed: 3 });
  const trained = path.join(dir, 'trained');
  trainHfCopy(base, trained, TEXT, 40);
  const runDir = path.join(dir, 'run');
  a = await writeHfCheckpoint({ db: db.db, runDir, runId: 'hf/inner/e0/r1', step: 0, src: base });
  b = await writeHfCheckpoint({ db: db.db, runDir, runId: 'hf/inner/e0/r1', step: 40, src: trained });
  for (const c of [a, b]) {
    const texts = referenceCompletions(c.path, PROMPTS, MAX_BYTES);
    expected.set(c.id, new Map(PROMPTS.map((p, i) => [p, cut(texts[i], MAX_BYTES)])));
  }
  server = await startFeedbackServer({
    db: db.db,
    port: await freePort(),
    token: TOKEN,
    hf: { python: hfTestPythonPath(), home: dir, log: (l) => logged.push(l) },
  });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

async function complete(
  body: unknown,
  url = server.url,
): Promise<{ status: number; body: { completion?: string; modelVersion?: string; error?: string } }> {
  const res = await fetch(`${url}/v1/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { completion?: string; modelVersion?: string; error?: string } };
}

const pids = (): number[] => server.completions.hf!.processes().map((p) => p.pid);

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (await ok()) return;
    await sleep(250);
  }
  throw new Error(`gave up waiting for ${what}`);
}

test('the two checkpoints answer differently, so a promotion can be seen in the replies', () => {
  expect(PROMPTS.some((p) => expected.get(a.id)!.get(p) !== expected.get(b.id)!.get(p))).toBe(true);
});

test('the promoted folder answers what a greedy decoder says on it, cut to maxBytes; modelVersion names it', async () => {
  await promote(db.db, 'hf1', a.id);
  for (const prompt of PROMPTS)
    expect(await complete({ campaignId: 'hf1', prompt, maxBytes: MAX_BYTES })).toEqual({
      status: 200,
      body: { completion: expected.get(a.id)!.get(prompt), modelVersion: a.id },
    });
  expect(await complete({ campaignId: 'hf1', prompt: PROMPTS[0], maxBytes: 5 })).toEqual({
    status: 200,
    body: { completion: cut(expected.get(a.id)!.get(PROMPTS[0])!, 5), modelVersion: a.id },
  });
  expect((await complete({ campaignId: 'hf1', prompt: PROMPTS[0], maxBytes: 0 })).body).toEqual({ completion: '', modelVersion: a.id });
  expect(server.completions.hf!.processes()).toEqual([expect.objectContaining({ checkpointId: a.id, engine: 'transformers' })]);
});

test('a promotion under continuous requests: no request fails, each reply is its modelVersion, then the old process stops', async () => {
  await promote(db.db, 'hf1', a.id);
  const [oldPid] = pids();
  const replies: { status: number; completion?: string; modelVersion?: string; prompt: string; sentAfterPromotion: boolean }[] = [];
  let promoted = false;
  let afterSwitch = 0;
  // Three clients, each sending its next request as soon as the last one answers.
  const client = async (k: number): Promise<void> => {
    for (let i = 0; afterSwitch < 30; i++) {
      const prompt = PROMPTS[(i + k) % PROMPTS.length];
      const sentAfterPromotion = promoted;
      const r = await complete({ campaignId: 'hf1', prompt, maxBytes: MAX_BYTES });
      replies.push({ status: r.status, ...r.body, prompt, sentAfterPromotion });
      if (r.status !== 200) return;
      if (r.body.modelVersion === b.id) afterSwitch++;
      if (replies.length >= 10 && !promoted) {
        await promote(db.db, 'hf1', b.id);
        promoted = true;
      }
    }
  };
  await Promise.all([0, 1, 2].map(client));
  expect(replies.filter((r) => r.status !== 200)).toEqual([]);
  for (const r of replies) expect(r.completion).toBe(expected.get(r.modelVersion!)!.get(r.prompt));
  const versions = replies.map((r) => r.modelVersion);
  // The old checkpoint kept answering while the new one loaded...
  expect(replies.filter((r) => r.sentAfterPromotion && r.modelVersion === a.id).length).toBeGreaterThan(0);
  // ...and not after the switch: at most the two other clients' requests, already sent to it, answer later.
  expect(versions.lastIndexOf(a.id)).toBeLessThan(versions.indexOf(b.id) + 3);
  await until('the old process to stop', () => !isAlive(oldPid));
  expect(server.completions.hf!.processes().map((p) => p.checkpointId)).toEqual([b.id]);
});

test('a crashed inference process: one line in the log, and the next request is answered by a new one', async () => {
  await promote(db.db, 'hf1', b.id);
  expect((await complete({ campaignId: 'hf1', prompt: PROMPTS[0], maxBytes: MAX_BYTES })).status).toBe(200);
  const [pid] = pids();
  const before = logged.length;
  process.kill(pid, 'SIGKILL');
  await until('the crash to be seen', () => !pids().includes(pid));
  const crash = logged.slice(before).filter((l) => l.includes('exited unexpectedly'));
  expect(crash).toHaveLength(1);
  expect(crash[0]).toContain(`(pid ${pid}) exited unexpectedly (signal SIGKILL)`);
  expect(crash[0]).not.toContain('\n');
  expect(await complete({ campaignId: 'hf1', prompt: PROMPTS[1], maxBytes: MAX_BYTES })).toEqual({
    status: 200,
    body: { completion: expected.get(b.id)!.get(PROMPTS[1]), modelVersion: b.id },
  });
  expect(pids()).toHaveLength(1);
  expect(pids()[0]).not.toBe(pid);
});

test.each([
  ['an auto_map in config.json', 'config.json: asks for remote code (auto_map); trust_remote_code is refused'],
  ['a .py file', 'holds code (modeling_evil.py); trust_remote_code is refused'],
])('a folder with %s is refused in one line (501), and nothing serves it', async (label, line) => {
  const src = path.join(dir, `remote-${label.length}`);
  fs.cpSync(a.path, src, { recursive: true });
  if (label.includes('auto_map')) {
    const config = JSON.parse(fs.readFileSync(path.join(src, 'config.json'), 'utf8')) as Record<string, unknown>;
    config.auto_map = { AutoModelForCausalLM: 'modeling_evil.EvilForCausalLM' };
    fs.writeFileSync(path.join(src, 'config.json'), JSON.stringify(config));
  } else fs.writeFileSync(path.join(src, 'modeling_evil.py'), 'import os\nos.system("touch /tmp/pwned")\n');
  const c = await writeHfCheckpoint({
    db: db.db,
    runDir: path.join(dir, `run-remote-${label.length}`),
    runId: 'evil/r1',
    step: label.length,
    src,
  });
  const campaign = `remote-${label.length}`;
  await promote(db.db, campaign, c.id);
  const r = await complete({ campaignId: campaign, prompt: PROMPTS[0] });
  expect(r).toEqual({ status: 501, body: { error: `checkpoint "${c.id}": ${line}` } });
  expect(server.completions.hf!.processes().map((p) => p.checkpointId)).not.toContain(c.id);
  // Refused once: the second request is answered the same without starting anything.
  const starts = logged.length;
  expect(await complete({ campaignId: campaign, prompt: PROMPTS[0] })).toEqual(r);
  expect(logged.length).toBe(starts);
});

test('close() stops every inference process', async () => {
  const s = await startFeedbackServer({
    db: db.db,
    port: await freePort(),
    token: TOKEN,
    hf: { python: hfTestPythonPath(), home: dir, log: () => {} },
  });
  await promote(db.db, 'hf2', a.id);
  expect((await complete({ campaignId: 'hf2', prompt: PROMPTS[0], maxBytes: 4 }, s.url)).status).toBe(200);
  const [pid] = s.completions.hf!.processes().map((p) => p.pid);
  expect(isAlive(pid)).toBe(true);
  await s.close();
  expect(isAlive(pid)).toBe(false);
  expect(s.completions.hf!.processes()).toEqual([]);
});

test.each(['SIGTERM', 'SIGKILL'] as const)('`flywheel serve` stopped with %s leaves no inference process behind', async (signal) => {
  await promote(db.db, 'hf3', b.id);
  const serve = runCliChild(
    { DATABASE_URL: dbUrl, FLYWHEEL_HOME: dir, FLYWHEEL_HF_PYTHON: hfTestPythonPath(), FLYWHEEL_API_TOKEN: TOKEN },
    ['serve', '--port', String(await freePort()), '--no-dashboard'],
  );
  try {
    const url = await serve.line(/feedback API and completions on (http:\S+)/);
    expect(await complete({ campaignId: 'hf3', prompt: PROMPTS[2], maxBytes: MAX_BYTES }, url[1])).toEqual({
      status: 200,
      body: { completion: expected.get(b.id)!.get(PROMPTS[2]), modelVersion: b.id },
    });
    const pid = Number((await serve.line(/inference process for checkpoint "[^"]+" ready \(pid (\d+)/))[1]);
    expect(isAlive(pid)).toBe(true);
    serve.child.kill(signal);
    await serve.exited;
    // SIGTERM: serve stops it before exiting. SIGKILL: serve cannot, so the process sees its parent die and exits.
    if (signal === 'SIGTERM') expect(isAlive(pid)).toBe(false);
    else await until(`inference process ${pid} to exit after serve's ${signal}`, () => !isAlive(pid));
  } finally {
    serve.child.kill('SIGKILL');
  }
});
