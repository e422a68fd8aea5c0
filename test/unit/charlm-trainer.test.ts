// The built-in trainer program against the training-job contract, run as the backends run it: a child
// process on a run directory. Metrics lines, a manifest whose sha256 matches, predict (one-shot and `--serve`), resume
// after SIGKILL (bit-for-bit the uninterrupted run), prompt exit on SIGTERM, and one clear line for a bad run.json.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckpointManifest, MetricLine, RunJson } from '../../core/job-contract';
import { expectServedAsOneShot } from '../helpers/predict-serve';

const REPO = path.join(__dirname, '..', '..');
const MAIN = path.join(REPO, 'trainers', 'charlm', 'main.ts');
const RUN_TS = path.join(REPO, 'bin', 'run-ts.js');
const SMALL = { context: 3, embed: 8, hidden: 24, batchSize: 16, lr: 0.02 };

let scratch: string;
let dataDir: string;

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'charlm-trainer-'));
  dataDir = path.join(scratch, 'data');
  fs.mkdirSync(dataDir);
  const src = path.join(REPO, 'node_modules', '@temporalio', 'common', 'src');
  const text = ['errors.ts', 'failure.ts', 'retry-policy.ts', 'time.ts'].map((f) => fs.readFileSync(path.join(src, f), 'utf8')).join('\n');
  fs.writeFileSync(path.join(dataDir, 'train.txt'), text);
});

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function makeRunDir(name: string, params: Record<string, unknown>, checkpointEvery: number): string {
  const dir = path.join(scratch, name);
  fs.mkdirSync(dir);
  const run: RunJson = {
    runId: name,
    experimentId: name,
    recipe: 'charlm',
    params: params as RunJson['params'],
    seed: 3,
    dataset: { versionId: 'v1', path: dataDir, trainFile: 'train.txt' },
    baseCheckpoint: null,
    checkpointEvery,
  };
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(run));
  return dir;
}

const trainer = (args: string[]) => spawnSync(process.execPath, [RUN_TS, MAIN, ...args], { encoding: 'utf8', timeout: 60_000 });
const startTrainer = (args: string[]): ChildProcess =>
  spawn(process.execPath, [RUN_TS, MAIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
const readManifest = (dir: string): CheckpointManifest =>
  JSON.parse(fs.readFileSync(path.join(dir, 'checkpoints', 'manifest.json'), 'utf8'));
const readMetrics = (dir: string): MetricLine[] =>
  fs
    .readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MetricLine);
const sha256 = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('train writes metric lines and checkpoints whose manifest sha256 matches; predict answers every prompt', () => {
  const dir = makeRunDir('basic', { ...SMALL, steps: 120, logEvery: 20 }, 50);
  const r = trainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);

  const lines = readMetrics(dir);
  expect(lines.map((l) => l.step)).toEqual([20, 40, 60, 80, 100, 120]);
  for (const l of lines) {
    for (const k of ['loss', 'tokens_per_s', 'lr']) expect(Number.isFinite(l[k])).toBe(true);
  }
  expect(lines[5].loss).toBeLessThan(lines[0].loss);

  const manifest = readManifest(dir);
  expect(manifest.checkpoints.map((c) => c.step)).toEqual([50, 100, 120]);
  for (const c of manifest.checkpoints) {
    expect(c.format).toBe('charlm-v1');
    expect(c.path).toBe(`checkpoints/step-${c.step}.bin`);
    expect(sha256(path.join(dir, c.path))).toBe(c.sha256);
  }
  expect(fs.readdirSync(path.join(dir, 'checkpoints')).filter((f) => f.includes('.tmp'))).toEqual([]);

  const prompts = path.join(scratch, 'prompts.jsonl');
  const out = path.join(scratch, 'predictions.jsonl');
  const asked = [
    { id: 'p1', prompt: 'export function ', maxBytes: 16 },
    { id: 'p2', prompt: 'const x = ', maxBytes: 4 },
    { id: 'p3', prompt: '', maxBytes: 0 },
  ];
  fs.writeFileSync(prompts, asked.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const p = trainer(['predict', '--checkpoint', path.join(dir, 'checkpoints', 'step-120.bin'), '--prompts', prompts, '--out', out]);
  expect(p.stderr).toBe('');
  expect(p.status).toBe(0);
  const predictions = fs
    .readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; completion: string });
  expect(predictions.map((x) => x.id)).toEqual(['p1', 'p2', 'p3']);
  predictions.forEach((x, i) => {
    expect(typeof x.completion).toBe('string');
    expect(x.completion.length).toBeLessThanOrEqual(asked[i].maxBytes);
  });

  // A finished run restarted on its directory does nothing.
  const again = trainer(['train', '--run-dir', dir]);
  expect(again.status).toBe(0);
  expect(readMetrics(dir)).toHaveLength(6);
});

test('predict --serve answers request after request as the one-shot predict does, and a bad one without ending', async () => {
  const bogus = path.join(scratch, 'bogus-served.bin');
  fs.writeFileSync(bogus, 'hello');
  // The first test's checkpoint, prompts and one-shot answers.
  await expectServedAsOneShot([process.execPath, RUN_TS, MAIN], process.env, {
    checkpoint: path.join(scratch, 'basic', 'checkpoints', 'step-120.bin'),
    bogus,
    prompts: path.join(scratch, 'prompts.jsonl'),
    oneShotFile: path.join(scratch, 'predictions.jsonl'),
    scratch,
    badError: /bogus-served\.bin: not a charlm-v1 checkpoint/,
  });
});

test('a run killed with SIGKILL resumes from its newest checkpoint, bit-for-bit the uninterrupted run', async () => {
  const params = { ...SMALL, steps: 2500, logEvery: 50 };
  const dir = makeRunDir('killed', params, 100);
  const child = startTrainer(['train', '--run-dir', dir]);
  const done = exited(child);
  const manifestFile = path.join(dir, 'checkpoints', 'manifest.json');
  await waitFor(() => fs.existsSync(manifestFile) && readManifest(dir).checkpoints.some((c) => c.step >= 200), 60_000);
  child.kill('SIGKILL');
  expect((await done).signal).toBe('SIGKILL');
  const killedAt = Math.max(...readManifest(dir).checkpoints.map((c) => c.step));
  expect(killedAt).toBeLessThan(params.steps); // the kill really interrupted the run
  const linesBefore = readMetrics(dir).length;

  const r = trainer(['train', '--run-dir', dir]);
  expect(r.status).toBe(0);
  const lines = readMetrics(dir);
  // The restart continues the step count from the checkpoint instead of starting again at step 50.
  expect(lines[linesBefore].step).toBe(killedAt + 50);
  expect(lines[lines.length - 1].step).toBe(params.steps);
  const steps = readManifest(dir).checkpoints.map((c) => c.step);
  expect(steps).toEqual(Array.from({ length: 25 }, (_, i) => (i + 1) * 100));

  const whole = makeRunDir('whole', params, 100);
  expect(trainer(['train', '--run-dir', whole]).status).toBe(0);
  expect(sha256(path.join(dir, 'checkpoints', 'step-2500.bin'))).toBe(sha256(path.join(whole, 'checkpoints', 'step-2500.bin')));
  const loss = (ls: MetricLine[]) => new Map(ls.map((l) => [l.step, l.loss]));
  expect(loss(lines)).toEqual(loss(readMetrics(whole)));
});

test('SIGTERM ends a training run promptly with a non-zero status', async () => {
  const dir = makeRunDir('terminated', { ...SMALL, steps: 1_000_000, logEvery: 10 }, 0);
  const child = startTrainer(['train', '--run-dir', dir]);
  const done = exited(child);
  await waitFor(() => fs.existsSync(path.join(dir, 'metrics.jsonl')) && readMetrics(dir).length > 0, 60_000);
  const t = Date.now();
  child.kill('SIGTERM');
  const { code, signal } = await done;
  expect(Date.now() - t).toBeLessThan(2000);
  expect(signal === 'SIGTERM' || (code !== null && code !== 0)).toBe(true);
});

test('zero steps writes the untrained model as checkpoint 0', () => {
  const dir = makeRunDir('baseline', { ...SMALL, steps: 0 }, 0);
  expect(trainer(['train', '--run-dir', dir]).status).toBe(0);
  expect(readManifest(dir).checkpoints.map((c) => c.step)).toEqual([0]);
});

test.each([
  ['a bad knob', { ...SMALL, lr: -1 }, /^charlm: run\.json: params\.lr must be a positive number \(got -1\)\n$/],
  ['an unknown knob', { ...SMALL, learning_rate: 0.1 }, /^charlm: run\.json: params\.learning_rate is not a charlm knob/],
])('%s exits 1 with one clear line on stderr', (_, params, message) => {
  const dir = makeRunDir(`bad-${Math.random().toString(36).slice(2)}`, params, 0);
  const r = trainer(['train', '--run-dir', dir]);
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(message);
  expect(fs.existsSync(path.join(dir, 'metrics.jsonl'))).toBe(false);
});

test('predict refuses a file that is not a charlm-v1 checkpoint', () => {
  const bogus = path.join(scratch, 'bogus.bin');
  fs.writeFileSync(bogus, 'hello');
  const prompts = path.join(scratch, 'one-prompt.jsonl');
  fs.writeFileSync(prompts, JSON.stringify({ id: 'a', prompt: 'x', maxBytes: 3 }) + '\n');
  const r = trainer(['predict', '--checkpoint', bogus, '--prompts', prompts, '--out', path.join(scratch, 'never.jsonl')]);
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^charlm: .*bogus\.bin: not a charlm-v1 checkpoint/);
  expect(fs.existsSync(path.join(scratch, 'never.jsonl'))).toBe(false);
});
