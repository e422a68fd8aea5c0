// The reference PyTorch trainer against the training-job contract, run as the backends run it: a python3
// process on a run directory, argv as data. Real torch on the CPU, tiny configs, one thread per process.
// Loss falls, the manifest's sha256 matches, predict answers exactly the prompts given (one-shot and as a warm
// `predict --serve`), a SIGKILLed run
// resumes where its newest checkpoint left off (to the same weights), torchrun with two processes writes one
// metrics stream, and a bad run.json fails with one line.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckpointManifest, MetricLine, RunJson } from '../../core/job-contract';
import { requires } from '../helpers/requires';
import { torchPathVar } from '../helpers/torch-python';
import { expectServedAsOneShot } from '../helpers/predict-serve';

requires('torch');

const REPO = path.join(__dirname, '..', '..');
const MAIN = path.join(REPO, 'trainers', 'torch', 'main.py');
/** One thread per process: the CI machine is small and shared, and a fixed count keeps CPU results reproducible. */
const ENV = { ...process.env, PATH: torchPathVar(), FLYWHEEL_TORCH_THREADS: '1', OMP_NUM_THREADS: '1' };
const TINY = { n_layer: 2, n_head: 2, d_model: 32, context: 32, batchSize: 8, lr: 0.003 };

let scratch: string;
let dataDir: string;

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'torch-trainer-'));
  dataDir = path.join(scratch, 'data');
  fs.mkdirSync(dataDir);
  const src = path.join(REPO, 'node_modules', '@temporalio', 'common', 'src');
  const text = ['errors.ts', 'failure.ts', 'retry-policy.ts', 'time.ts'].map((f) => fs.readFileSync(path.join(src, f), 'utf8')).join('\n');
  fs.writeFileSync(path.join(dataDir, 'train.txt'), text);
});

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

function makeRunDir(name: string, params: Record<string, unknown>, checkpointEvery: number, over: Partial<RunJson> = {}): string {
  const dir = path.join(scratch, name);
  fs.mkdirSync(dir);
  const run: RunJson = {
    runId: name,
    experimentId: name,
    recipe: 'custom',
    params,
    seed: 3,
    dataset: { versionId: 'v1', path: dataDir, trainFile: 'train.txt' },
    baseCheckpoint: null,
    checkpointEvery,
    ...over,
  };
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(run));
  return dir;
}

const trainer = (args: string[]) => spawnSync('python3', [MAIN, ...args], { encoding: 'utf8', timeout: 90_000, env: ENV });
const startTrainer = (args: string[]): ChildProcess => spawn('python3', [MAIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: ENV });
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

/** Runs a short Python program on checkpoint files (paths as argv) and returns its stdout, parsed as JSON. */
function inspect(program: string, files: string[]): unknown {
  const r = spawnSync('python3', ['-c', `import json, sys, torch\n${program}`, ...files], { encoding: 'utf8', timeout: 60_000, env: ENV });
  if (r.status !== 0) throw new Error(`inspect failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('train on the CPU: loss falls, the manifest sha256 matches; predict answers exactly the prompts given', () => {
  const dir = makeRunDir('basic', { ...TINY, steps: 200, logEvery: 50 }, 100);
  const r = trainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);

  const lines = readMetrics(dir);
  expect(lines.map((l) => l.step)).toEqual([50, 100, 150, 200]);
  for (const l of lines) {
    for (const k of ['loss', 'lr', 'tokens', 'tokens_per_s']) expect(Number.isFinite(l[k])).toBe(true);
    expect(l.tokens).toBe(l.step * TINY.batchSize * TINY.context);
    expect(l.mfu).toBeUndefined(); // the CPU without FLYWHEEL_PEAK_FLOPS: no peak to compare with
  }
  // Bits per byte: an untrained model over 257 tokens starts near log2(257) = 8.0; training must bring it well down.
  expect(lines[0].loss).toBeLessThan(8.1);
  expect(lines[3].loss).toBeLessThan(lines[0].loss - 0.5);

  const manifest = readManifest(dir);
  expect(manifest.checkpoints.map((c) => c.step)).toEqual([100, 200]);
  for (const c of manifest.checkpoints) {
    expect(c.format).toBe('torch-gpt-v1');
    expect(c.path).toBe(`checkpoints/step-${c.step}.pt`);
    expect(sha256(path.join(dir, c.path))).toBe(c.sha256);
  }
  expect(fs.readdirSync(path.join(dir, 'checkpoints')).filter((f) => f.includes('.tmp'))).toEqual([]);

  const prompts = path.join(scratch, 'prompts.jsonl');
  const out = path.join(scratch, 'predictions.jsonl');
  const asked = [
    { id: 'p1', prompt: 'export function ', maxBytes: 16 },
    { id: 'p2', prompt: 'const é = ', maxBytes: 5 },
    { id: 'p3', prompt: '', maxBytes: 0 },
    { id: 'p1-twin', prompt: 'export function ', maxBytes: 16 },
  ];
  fs.writeFileSync(prompts, asked.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const p = trainer(['predict', '--checkpoint', path.join(dir, 'checkpoints', 'step-200.pt'), '--prompts', prompts, '--out', out]);
  expect(p.stderr).toBe('');
  expect(p.status).toBe(0);
  const predictions = fs
    .readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; completion: string });
  expect(predictions.map((x) => x.id)).toEqual(['p1', 'p2', 'p3', 'p1-twin']);
  predictions.forEach((x, i) => expect(Buffer.byteLength(x.completion)).toBeLessThanOrEqual(asked[i].maxBytes));
  expect(predictions[0].completion.length).toBeGreaterThan(0);
  expect(predictions[3].completion).toBe(predictions[0].completion); // greedy from a frozen model: no sampling

  // A finished run restarted on its directory does nothing.
  const again = trainer(['train', '--run-dir', dir]);
  expect(again.status).toBe(0);
  expect(readMetrics(dir)).toHaveLength(4);
});

test('predict --serve answers request after request as the one-shot predict does, a bad one without ending', async () => {
  const bogus = path.join(scratch, 'bogus-served.pt');
  fs.writeFileSync(bogus, 'hello');
  // The first test's checkpoint, prompts and one-shot answers.
  await expectServedAsOneShot(['python3', MAIN], ENV, {
    checkpoint: path.join(scratch, 'basic', 'checkpoints', 'step-200.pt'),
    bogus,
    prompts: path.join(scratch, 'prompts.jsonl'),
    oneShotFile: path.join(scratch, 'predictions.jsonl'),
    scratch,
    badError: /^checkpoint .*bogus-served\.pt: not a torch-gpt-v1 checkpoint/,
  });
});

test('a run killed with SIGKILL resumes from its newest checkpoint, to the weights of the uninterrupted run', async () => {
  const params = { ...TINY, steps: 300, logEvery: 25 };
  const dir = makeRunDir('killed', params, 25);
  const child = startTrainer(['train', '--run-dir', dir]);
  const done = exited(child);
  const manifestFile = path.join(dir, 'checkpoints', 'manifest.json');
  await waitFor(() => fs.existsSync(manifestFile) && readManifest(dir).checkpoints.length > 0, 60_000);
  child.kill('SIGKILL');
  expect((await done).signal).toBe('SIGKILL');
  const killedAt = Math.max(...readManifest(dir).checkpoints.map((c) => c.step));
  expect(killedAt).toBeLessThan(params.steps); // the kill really interrupted the run
  const linesBefore = readMetrics(dir).length;

  const r = trainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const lines = readMetrics(dir);
  // The restart continues the step count from the checkpoint instead of starting again at step 25.
  expect(lines[linesBefore].step).toBe(killedAt + 25);
  expect(lines[lines.length - 1].step).toBe(params.steps);
  expect(readManifest(dir).checkpoints.map((c) => c.step)).toEqual(Array.from({ length: 12 }, (_, i) => (i + 1) * 25));
  // A kill during a checkpoint write leaves a temporary file: the relaunch clears it.
  expect(fs.readdirSync(path.join(dir, 'checkpoints')).filter((f) => f.includes('.tmp'))).toEqual([]);

  const whole = makeRunDir('whole', params, 25);
  expect(trainer(['train', '--run-dir', whole]).status).toBe(0);
  // The files differ (torch.save stamps each file with a random serialization id), so compare what they hold:
  // every weight and every optimizer moment, bit for bit. On the CPU with one thread each op is deterministic,
  // and the checkpoint carries the data sampler's and torch's RNG states, so the resumed run repeats the same
  // steps on the same windows.
  const same = inspect(
    `a, b = (torch.load(f, weights_only=True) for f in sys.argv[1:])
ta = list(a['model'].values()) + [t for s in a['optimizer']['state'].values() for t in s.values()]
tb = list(b['model'].values()) + [t for s in b['optimizer']['state'].values() for t in s.values()]
print(json.dumps({'tensors': len(ta), 'equal': len(ta) == len(tb) and all(torch.equal(x, y) for x, y in zip(ta, tb))}))`,
    [path.join(dir, 'checkpoints', 'step-300.pt'), path.join(whole, 'checkpoints', 'step-300.pt')],
  ) as { tensors: number; equal: boolean };
  expect(same.tensors).toBeGreaterThan(20);
  expect(same.equal).toBe(true);
  const loss = (ls: MetricLine[]) => new Map(ls.map((l) => [l.step, l.loss]));
  expect(loss(lines)).toEqual(loss(readMetrics(whole)));
});

test('baseCheckpoint starts a new run from the given weights, with a fresh step count', () => {
  const first = makeRunDir('first', { ...TINY, steps: 100, logEvery: 50 }, 0);
  expect(trainer(['train', '--run-dir', first]).status).toBe(0);
  const fresh = readMetrics(first)[0];
  const next = makeRunDir('next', { ...TINY, steps: 50, logEvery: 50 }, 0, {
    baseCheckpoint: path.join(first, 'checkpoints', 'step-100.pt'),
  });
  const r = trainer(['train', '--run-dir', next]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const [line] = readMetrics(next);
  expect(line.step).toBe(50);
  // The same 50 steps from trained weights: far below the first 50 steps from random ones.
  expect(line.loss).toBeLessThan(fresh.loss - 0.5);
});

test('MFU is 6N + attention FLOPs per token over the peak (FLYWHEEL_PEAK_FLOPS stands in for a GPU on the CPU)', () => {
  const dir = makeRunDir('mfu', { ...TINY, steps: 20, logEvery: 10 }, 0);
  const r = spawnSync('python3', [MAIN, 'train', '--run-dir', dir], {
    encoding: 'utf8',
    timeout: 90_000,
    env: { ...ENV, FLYWHEEL_PEAK_FLOPS: '1e12' },
  });
  expect(r.status).toBe(0);
  // Counted by hand for n_layer 2, d_model 32, context 32: the tied embedding 257 * 32, per block two layer
  // norms (4d), qkv (3d^2 + 3d), the attention projection (d^2 + d) and the MLP (8d^2 + 5d), and the final
  // norm (2d); the position table is a lookup, not a matmul. Attention: 12 * layers * d_model * context.
  const d = 32;
  const n = 257 * d + 2 * (12 * d * d + 13 * d) + 2 * d;
  const flopsPerToken = 6 * n + 12 * 2 * d * 32;
  expect(readMetrics(dir).map((l) => l.step)).toEqual([10, 20]);
  for (const l of readMetrics(dir)) expect(l.mfu / ((flopsPerToken * l.tokens_per_s) / 1e12)).toBeCloseTo(1, 9);
});

test('zero steps writes the untrained model as checkpoint 0 (a campaign baseline)', () => {
  const dir = makeRunDir('untrained', { ...TINY, steps: 0 }, 0);
  expect(trainer(['train', '--run-dir', dir]).status).toBe(0);
  expect(readManifest(dir).checkpoints.map((c) => c.step)).toEqual([0]);
});

test.each([
  ['a bad knob', { ...TINY, lr: -1 }, {}, /^torch-trainer: run\.json: params\.lr must be a number > 0 \(got -1\)\n$/],
  [
    'an unknown knob',
    { ...TINY, learning_rate: 0.1 },
    {},
    /^torch-trainer: run\.json: params\.learning_rate is not a torch-gpt knob \(knobs: n_layer, .*\)\n$/,
  ],
  [
    'heads that do not divide the width',
    { ...TINY, n_head: 3 },
    {},
    /^torch-trainer: run\.json: params\.d_model \(32\) must divide by params\.n_head \(3\)\n$/,
  ],
  [
    'a missing dataset',
    TINY,
    { dataset: { versionId: 'v0', path: '/nonexistent/v0', trainFile: 'train.txt' } },
    /^torch-trainer: cannot read the training text \/nonexistent\/v0\/train\.txt: No such file or directory\n$/,
  ],
  [
    'a diverging run',
    { ...TINY, lr: 1e9, gradClip: 0, steps: 50, logEvery: 5 },
    {},
    /^torch-trainer: training diverged at step \d+ in .*: loss nan/,
  ],
])('%s exits 1 with one clear line on stderr', (_, params, over, message) => {
  const dir = makeRunDir(`bad-${Math.random().toString(36).slice(2)}`, params, 0, over as Partial<RunJson>);
  const r = trainer(['train', '--run-dir', dir]);
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(message);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(fs.existsSync(path.join(dir, 'checkpoints'))).toBe(false);
});

test('predict refuses a bad prompt line and a file that is not a torch-gpt-v1 checkpoint, writing nothing', () => {
  const dir = makeRunDir('for-predict', { ...TINY, steps: 0 }, 0);
  expect(trainer(['train', '--run-dir', dir]).status).toBe(0);
  const ckpt = path.join(dir, 'checkpoints', 'step-0.pt');
  const prompts = path.join(scratch, 'bad-prompts.jsonl');
  const out = path.join(scratch, 'never.jsonl');
  fs.writeFileSync(
    prompts,
    JSON.stringify({ id: 'a', prompt: 'x', maxBytes: 3 }) + '\n' + JSON.stringify({ id: 'b', prompt: 'y', maxBytes: -1 }) + '\n',
  );
  const bad = trainer(['predict', '--checkpoint', ckpt, '--prompts', prompts, '--out', out]);
  expect(bad.status).toBe(1);
  expect(bad.stderr).toMatch(/^torch-trainer: .*bad-prompts\.jsonl:2: maxBytes must be an integer from 0 to 65536\n$/);

  const bogus = path.join(scratch, 'bogus.pt');
  fs.writeFileSync(bogus, 'hello');
  fs.writeFileSync(prompts, JSON.stringify({ id: 'a', prompt: 'x', maxBytes: 3 }) + '\n');
  const r = trainer(['predict', '--checkpoint', bogus, '--prompts', prompts, '--out', out]);
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^torch-trainer: checkpoint .*bogus\.pt: not a torch-gpt-v1 checkpoint/);
  expect(fs.existsSync(out)).toBe(false);
});

const hasTorchrun = spawnSync('torchrun', ['--help'], { encoding: 'utf8', env: ENV }).status === 0;
(hasTorchrun ? test : test.skip)(
  `torchrun --nproc_per_node 2 (gloo, CPU) writes one metrics stream and one set of checkpoints${hasTorchrun ? '' : ' [skipped: torchrun is not on PATH]'}`,
  () => {
    const params = { ...TINY, steps: 40, logEvery: 10 };
    const dir = makeRunDir('ddp', params, 20);
    const r = spawnSync('torchrun', ['--standalone', '--nproc_per_node', '2', MAIN, 'train', '--run-dir', dir], {
      encoding: 'utf8',
      timeout: 120_000,
      env: ENV,
    });
    expect(r.status).toBe(0);
    const lines = readMetrics(dir);
    expect(lines.map((l) => l.step)).toEqual([10, 20, 30, 40]); // rank 0 alone writes: each step once
    expect(lines[3].tokens).toBe(40 * params.batchSize * params.context * 2);
    expect(readManifest(dir).checkpoints.map((c) => c.step)).toEqual([20, 40]);
    // Each rank saved its own sampler state, and they differ: the ranks train on different windows.
    const rng = inspect(
      `c = torch.load(sys.argv[1], weights_only=True)
print(json.dumps({'ranks': len(c['rng']), 'distinct': not torch.equal(c['rng'][0]['data'], c['rng'][1]['data'])}))`,
      [path.join(dir, 'checkpoints', 'step-40.pt')],
    );
    expect(rng).toEqual({ ranks: 2, distinct: true });
  },
);
