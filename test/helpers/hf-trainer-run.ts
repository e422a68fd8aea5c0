// Runs the Hugging Face trainer (trainers/hf/main.py) as the backends run it, on a run directory of a tiny task
// whose examples a small Llama memorises in a hundred steps, and reads back what it wrote. Call requires('hf') first.
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MANIFEST_FILE, METRICS_FILE, RUN_JSON } from '../../core/contract-files';
import type { CheckpointManifest, MetricLine, RunJson } from '../../core/job-contract';
import { hfTestPythonPath } from './hf-python';

const REPO = path.join(__dirname, '..', '..');
export const HF_MAIN = path.join(REPO, 'trainers', 'hf', 'main.py');
const PROBE = path.join(__dirname, 'hf_probe.py');

/** One thread per process: the machine is small and shared, and a fixed count keeps CPU results reproducible. */
export const HF_ENV = { ...process.env, FLYWHEEL_TORCH_THREADS: '1', OMP_NUM_THREADS: '1' };

/** The task: a colour for each thing, learnt by heart. One completion is not ASCII, for the byte cut. */
export const COLOURS: [string, string][] = [
  ['sky', 'blue'],
  ['grass', 'green'],
  ['snow', 'white'],
  ['coal', 'black'],
  ['blood', 'red'],
  ['sun', 'yellow'],
  ['rust', 'orange'],
  ['plum', 'purple'],
  ['latte', 'café'],
  ['ash', 'grey'],
];
export const promptOf = (thing: string) => `colour of ${thing}: `;

/** The tokenizer's text: the task's own data. */
export const TASK_TEXT = COLOURS.map(([t, c]) => `${promptOf(t)}${c}\n`)
  .join('')
  .repeat(4);

/** Writes the dataset version (train.jsonl, train.txt, and pairs.jsonl when given) into `dir`. */
export function writeDataset(dir: string, pairs?: { prompt: string; chosen: string; rejected: string }[]): void {
  fs.mkdirSync(dir, { recursive: true });
  const lines = COLOURS.map(([t, c]) => ({ prompt: promptOf(t), completion: c, category: 'colour', weight: 1, source: 'base' }));
  fs.writeFileSync(path.join(dir, 'train.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'train.txt'), lines.map((l) => l.prompt + l.completion).join('\n'));
  if (pairs)
    fs.writeFileSync(
      path.join(dir, 'pairs.jsonl'),
      pairs.map((p) => JSON.stringify({ ...p, category: 'colour', weight: 1, source: 'pairs' })).join('\n') + '\n',
    );
}

export function makeHfRunDir(
  dir: string,
  dataDir: string,
  params: Record<string, unknown>,
  checkpointEvery: number,
  over: Partial<RunJson> = {},
): string {
  fs.mkdirSync(dir, { recursive: true });
  const pairs = fs.existsSync(path.join(dataDir, 'pairs.jsonl'));
  const run: RunJson = {
    runId: path.basename(dir),
    experimentId: path.basename(dir),
    recipe: 'hf',
    params,
    seed: 7,
    dataset: {
      versionId: 'v1',
      path: dataDir,
      trainFile: 'train.txt',
      examplesFile: path.join(dataDir, 'train.jsonl'),
      ...(pairs ? { pairsFile: path.join(dataDir, 'pairs.jsonl') } : {}),
    },
    baseCheckpoint: null,
    checkpointEvery,
    ...over,
  };
  fs.writeFileSync(path.join(dir, RUN_JSON), JSON.stringify(run));
  return dir;
}

export const hfTrainer = (args: string[], env: NodeJS.ProcessEnv = HF_ENV): SpawnSyncReturns<string> =>
  spawnSync(hfTestPythonPath(), [HF_MAIN, ...args], { encoding: 'utf8', timeout: 300_000, env });

export const startHfTrainer = (args: string[]): ChildProcess =>
  spawn(hfTestPythonPath(), [HF_MAIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: HF_ENV });

export const readManifest = (dir: string): CheckpointManifest =>
  JSON.parse(fs.readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')) as CheckpointManifest;

export const readMetrics = (dir: string): MetricLine[] =>
  fs
    .readFileSync(path.join(dir, METRICS_FILE), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MetricLine);

/** test/helpers/hf_probe.py's answer (see there): training targets, log-probabilities, the Python digest. */
export function hfProbe<T>(...args: string[]): T {
  const r = spawnSync(hfTestPythonPath(), [PROBE, ...args], { encoding: 'utf8', timeout: 180_000, env: HF_ENV });
  if (r.status !== 0) throw new Error(`hf_probe.py ${args[0]} failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
}

/** Runs predict on `prompts` and returns its lines, parsed. */
export function hfPredict(checkpoint: string, prompts: { id: string; prompt: string; maxBytes: number }[], scratch: string) {
  const input = path.join(scratch, `prompts-${Math.random().toString(36).slice(2)}.jsonl`);
  const out = `${input}.out`;
  fs.writeFileSync(input, prompts.map((p) => JSON.stringify(p)).join('\n') + '\n');
  const r = hfTrainer(['predict', '--checkpoint', checkpoint, '--prompts', input, '--out', out]);
  if (r.status !== 0) throw new Error(`predict failed: ${r.stderr}`);
  return fs
    .readFileSync(out, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; completion: string });
}
