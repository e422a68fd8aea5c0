// `POST /v1/complete` as a client sees it: a real server over a fresh database, serving real checkpoints trained by
// the built-in trainer, compared byte for byte with greedyComplete on the same files.
import fs from 'node:fs';
import { greedyComplete } from '../../formats/charlm/model';
import { openDb, type DbHandle } from '../../db/client';
import { checkpoints } from '../../db/schema';
import { CompletionService } from '../../server/completion-service';
import { startFeedbackServer, type FeedbackServer } from '../../server/feedback-server';
import { promote, trainCheckpoint, type TrainedCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { freePort } from '../helpers/ports';

const TOKEN = 'complete-token-41';
const dir = scratchDir('completions');
/** A code-like text of the test's own: a source file of the repository would change under the test (and did). */
const TEXT = Array.from({ length: 300 }, (_, i) => `export function f${i}(a, b) {\n  return a * ${i % 7} + b;\n}\n`).join('');
const PROMPT = 'export function ';
let db: DbHandle;
let server: FeedbackServer;
let a: TrainedCheckpoint;
let b: TrainedCheckpoint;

beforeAll(async () => {
  ({ handle: db } = await freshDatabase('completions_api'));
  a = await trainCheckpoint({ dir, id: 'c1/inner/e0/r1/step-60', text: TEXT, seed: 1, steps: 60, db: db.db });
  b = await trainCheckpoint({ dir, id: 'c1/inner/e1/r1/step-120', text: TEXT, seed: 2, steps: 120, db: db.db });
  await promote(db.db, 'c1', a.id);
  await promote(db.db, 'no-model', null);
  await db.db.insert(checkpoints).values({
    id: 'torch/r1/step-1',
    runId: 'torch/r1',
    experimentId: 'torch',
    step: 1,
    path: a.path,
    sha256: a.sha256,
    format: 'torch-state-dict',
  });
  await promote(db.db, 'torch', 'torch/r1/step-1');
  server = await startFeedbackServer({ db: db.db, port: await freePort(), token: TOKEN });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});

async function complete(
  body: unknown,
  url = server.url,
  token: string | null = TOKEN,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${url}/v1/complete`, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

test('the promoted checkpoint answers exactly what greedyComplete answers on its file; maxBytes defaults to 64', async () => {
  expect(await complete({ campaignId: 'c1', prompt: PROMPT, maxBytes: 24 })).toEqual({
    status: 200,
    body: { completion: greedyComplete(a.model, PROMPT, 24), modelVersion: a.id },
  });
  const dflt = await complete({ campaignId: 'c1', prompt: 'const x = ' });
  expect(dflt.body).toEqual({ completion: greedyComplete(a.model, 'const x = ', 64), modelVersion: a.id });
  expect(await complete({ campaignId: 'c1', prompt: PROMPT, maxBytes: 0 })).toEqual({
    status: 200,
    body: { completion: '', modelVersion: a.id },
  });
});

test('a new promotion is served from the next request on; a checkpoint is read from disk once', async () => {
  // Otherwise a stale cache could not be told from a fresh one.
  expect(greedyComplete(b.model, PROMPT, 32)).not.toBe(greedyComplete(a.model, PROMPT, 32));
  expect((await complete({ campaignId: 'c1', prompt: PROMPT, maxBytes: 32 })).body.modelVersion).toBe(a.id);
  await promote(db.db, 'c1', b.id);
  expect(await complete({ campaignId: 'c1', prompt: PROMPT, maxBytes: 32 })).toEqual({
    status: 200,
    body: { completion: greedyComplete(b.model, PROMPT, 32), modelVersion: b.id },
  });
  // Loaded once: with its file gone, the first checkpoint is still served from memory when promoted back.
  fs.renameSync(a.path, `${a.path}.away`);
  try {
    await promote(db.db, 'c1', a.id);
    expect((await complete({ campaignId: 'c1', prompt: PROMPT, maxBytes: 32 })).body).toEqual({
      completion: greedyComplete(a.model, PROMPT, 32),
      modelVersion: a.id,
    });
  } finally {
    fs.renameSync(`${a.path}.away`, a.path);
  }
});

test('the cache keeps the most recently used checkpoints, up to maxCachedModels', async () => {
  const service = new CompletionService({ db: db.db, maxCachedModels: 1 });
  await promote(db.db, 'c1', a.id);
  await service.complete({ campaignId: 'c1', prompt: PROMPT, maxBytes: 4 });
  expect(service.cached()).toEqual([a.id]);
  await promote(db.db, 'c1', b.id);
  await service.complete({ campaignId: 'c1', prompt: PROMPT, maxBytes: 4 });
  expect(service.cached()).toEqual([b.id]);
  await promote(db.db, 'c1', a.id);
});

test('unknown campaign 404, nothing promoted 409, another checkpoint format 501, each with a message', async () => {
  const unknown = await complete({ campaignId: 'nope', prompt: PROMPT });
  expect(unknown).toEqual({ status: 404, body: { error: 'campaign "nope" does not exist' } });
  const none = await complete({ campaignId: 'no-model', prompt: PROMPT });
  expect(none.status).toBe(409);
  expect(none.body.error).toContain('has no promoted model yet');
  const torch = await complete({ campaignId: 'torch', prompt: PROMPT });
  expect(torch.status).toBe(501);
  expect(torch.body.error).toContain('"torch-state-dict"');
});

test.each([
  ['bad JSON', '{"campaignId": ', '(root): '],
  ['no campaign', { prompt: PROMPT }, 'campaignId: '],
  ['a prompt that is not text', { campaignId: 'c1', prompt: 7 }, 'prompt: '],
  ['too many bytes', { campaignId: 'c1', prompt: PROMPT, maxBytes: 4097 }, 'maxBytes: must be an integer from 0 to 4096'],
  ['fractional bytes', { campaignId: 'c1', prompt: PROMPT, maxBytes: 1.5 }, 'maxBytes: must be an integer from 0 to 4096'],
  ['an unknown field', { campaignId: 'c1', prompt: PROMPT, temperature: 0.7 }, 'temperature: unknown field'],
])('%s is a 400 naming the path', async (_label, body, problem) => {
  const r = await complete(body);
  expect(r.status).toBe(400);
  expect((r.body.problems as string[]).some((p) => p.startsWith(problem))).toBe(true);
});

test('completions need the token when one is set', async () => {
  expect((await complete({ campaignId: 'c1', prompt: PROMPT }, server.url, null)).status).toBe(401);
  expect((await complete({ campaignId: 'c1', prompt: PROMPT }, server.url, 'wrong')).status).toBe(401);
});

test('a checkpoint whose bytes do not match its sha256 is never served, and is not cached', async () => {
  const bad = await trainCheckpoint({ dir, id: 'c2/inner/e0/r1/step-10', text: TEXT, seed: 3, steps: 10, db: db.db });
  const bytes = fs.readFileSync(bad.path);
  bytes[bytes.length - 1] ^= 0xff;
  fs.writeFileSync(bad.path + '.tampered', bytes);
  fs.renameSync(bad.path, bad.path + '.good');
  fs.renameSync(bad.path + '.tampered', bad.path);
  await promote(db.db, 'c2', bad.id);
  const r = await complete({ campaignId: 'c2', prompt: PROMPT }, server.url);
  expect(r.status).toBe(500);
  expect(JSON.stringify(r.body)).not.toContain(dir);
  // Restored: the next request loads it (a failed load was not cached).
  fs.renameSync(bad.path + '.good', bad.path);
  expect(await complete({ campaignId: 'c2', prompt: PROMPT, maxBytes: 8 })).toEqual({
    status: 200,
    body: { completion: greedyComplete(bad.model, PROMPT, 8), modelVersion: bad.id },
  });
});

test('a database that cannot be reached is a 503', async () => {
  const dead = openDb(`postgres://postgres@127.0.0.1:${await freePort()}/none`);
  const s = await startFeedbackServer({ db: dead.db, port: await freePort() });
  try {
    const r = await complete({ campaignId: 'c1', prompt: PROMPT }, s.url, null);
    expect(r.status).toBe(503);
    expect(r.body.error).toContain('retry later');
  } finally {
    await s.close();
    await dead.close();
  }
});
