// The Hugging Face trainer killed and relaunched, and run under torchrun: a SIGKILLed run resumes from its newest
// listed checkpoint (TRL's resume_from_checkpoint on the state in DIR/hf-state) on the same data order, to the loss of
// the uninterrupted run, with every metric step once; two gloo processes on the CPU write one metrics stream and
// one set of checkpoints (rank 0 alone). Real transformers/TRL on a tiny Llama; one thread per process.
import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sha256Folder } from '../../services/checkpoint-manifest';
import { requires } from '../helpers/requires';
import { hfTestPythonPath } from '../helpers/hf-python';
import { makeTinyHfModel } from '../helpers/tiny-hf-model';
import {
  HF_ENV,
  HF_MAIN,
  TASK_TEXT,
  hfTrainer,
  makeHfRunDir,
  readManifest,
  readMetrics,
  startHfTrainer,
  writeDataset,
} from '../helpers/hf-trainer-run';

requires('hf');

let scratch: string;
let dataDir: string;
let model: string;
const PARAMS = { lr: 0.003, batchSize: 4, steps: 60, logEvery: 5 };
/** The stated tolerance: on the CPU with one thread the resumed run repeats the same steps, so it is tight. */
const LOSS_TOLERANCE = 1e-4;

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-resume-'));
  dataDir = path.join(scratch, 'data');
  writeDataset(dataDir);
  model = makeTinyHfModel(path.join(scratch, 'model'), { text: TASK_TEXT });
}, 120_000);

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a run killed with SIGKILL resumes from its newest checkpoint to the loss of the uninterrupted run', async () => {
  const dir = makeHfRunDir(path.join(scratch, 'killed'), dataDir, { model, ...PARAMS }, 20);
  const child = startHfTrainer(['train', '--run-dir', dir]);
  const done = exited(child);
  const manifest = path.join(dir, 'checkpoints', 'manifest.json');
  // Killed once metrics have gone past the newest checkpoint: the relaunch repeats those steps and must not log them
  // twice.
  const newest = () => (fs.existsSync(manifest) ? Math.max(0, ...readManifest(dir).checkpoints.map((c) => c.step)) : 0);
  const lastLogged = () => (fs.existsSync(path.join(dir, 'metrics.jsonl')) ? Math.max(0, ...readMetrics(dir).map((l) => l.step)) : 0);
  await waitFor(() => newest() > 0 && lastLogged() > newest(), 240_000);
  child.kill('SIGKILL');
  expect((await done).signal).toBe('SIGKILL');
  const killedAt = newest();
  expect(killedAt).toBeLessThan(PARAMS.steps); // the kill really interrupted the run
  expect(lastLogged()).toBeGreaterThan(killedAt);
  expect(fs.existsSync(path.join(dir, 'hf-state', `checkpoint-${killedAt}`))).toBe(true);

  const r = hfTrainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const resumed = readMetrics(dir);
  // Every step once, in order: the relaunch wrote none of the steps the killed run had already logged.
  expect(resumed.map((l) => l.step)).toEqual(Array.from({ length: 12 }, (_, i) => (i + 1) * 5));
  expect(readManifest(dir).checkpoints.map((c) => c.step)).toEqual([20, 40, 60]);

  const whole = makeHfRunDir(path.join(scratch, 'whole'), dataDir, { model, ...PARAMS }, 20);
  expect(hfTrainer(['train', '--run-dir', whole]).status).toBe(0);
  const uninterrupted = readMetrics(whole);
  // The same loss at every step after the resume point (the same batches on the same weights), within the tolerance,
  // and the same token count: the data order was kept.
  for (const [i, l] of resumed.entries()) {
    expect(Math.abs(l.loss - uninterrupted[i].loss)).toBeLessThanOrEqual(LOSS_TOLERANCE);
    expect(l.tokens).toBe(uninterrupted[i].tokens);
  }
  // And the same final weights, to the bit: the resumed optimizer, scheduler and data position were the killed run's.
  const final = (d: string) => sha256Folder(path.join(d, 'checkpoints', 'step-60')).files['model.safetensors'];
  expect(final(dir)).toBe(final(whole));
}, 900_000);

const torchrun = () => path.join(path.dirname(hfTestPythonPath()), 'torchrun');

test('torchrun --nproc_per_node 2 (DDP, gloo on the CPU): rank 0 alone writes metrics and checkpoints', () => {
  const params = { model, ...PARAMS, steps: 20, logEvery: 10 };
  const dir = makeHfRunDir(path.join(scratch, 'ddp'), dataDir, params, 10);
  const r = spawnSync(torchrun(), ['--standalone', '--nproc_per_node', '2', HF_MAIN, 'train', '--run-dir', dir], {
    encoding: 'utf8',
    timeout: 600_000,
    env: HF_ENV,
  });
  expect(r.status).toBe(0);
  const lines = readMetrics(dir);
  expect(lines.map((l) => l.step)).toEqual([10, 20]); // each step once
  expect(readManifest(dir).checkpoints.map((c) => c.step)).toEqual([10, 20]);
  // Both processes trained on batches of their own: twice the sequences of one process per step.
  const single = makeHfRunDir(path.join(scratch, 'single'), dataDir, params, 0);
  expect(hfTrainer(['train', '--run-dir', single]).status).toBe(0);
  expect(lines[1].tokens).toBeGreaterThan(readMetrics(single)[1].tokens * 1.6);
}, 900_000);
