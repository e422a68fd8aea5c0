// Training throughput of the Hugging Face trainer (trainers/hf/main.py train on a run directory, as a campaign runs
// it) against a bare TRL script of the same config (bench/hf-bare-trl.py: the same model, examples, SFT settings,
// steps and threads), in one run, alternating A B A B so that both see the same machine. Prints each run's steady
// tokens/s (the mean of its logging windows but the first, which pays for warm-up), the ratio, and the load average.
// Run: npm run bench -- hf-throughput [--steps N] [--threads N] [--rounds N]   (needs the hf-venv: flywheel setup hf)
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { resolveConfig } from '../core/config';
import type { MetricLine, RunJson } from '../core/job-contract';
import { hfEnvReady, hfPython } from '../stack/hf-env';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';

const REPO = path.join(__dirname, '..');
const MAIN = path.join(REPO, 'trainers', 'hf', 'main.py');
const BARE = path.join(__dirname, 'hf-bare-trl.py');
const TINY_MODEL = path.join(REPO, 'trainers', 'hf', 'tiny_model.py');
const MODEL = { layers: 4, hidden: 128, heads: 4, vocab: 512 };
const CONFIG = { batchSize: 8, maxLength: 128, lr: 0.001, logEvery: 10 };

/** Synthetic examples, every completion the same length (so weight x (bytes + 1) draws them uniformly, as the peer). */
function writeExamples(file: string, count: number): string {
  let seed = 1;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const word = (n: number) => Array.from({ length: n }, () => String.fromCharCode(97 + Math.floor(rand() * 26))).join('');
  const lines = Array.from({ length: count }, (_, i) => ({
    prompt: `item ${i}: ${word(6)} ${word(8)} ${word(5)} -> `,
    completion: `${word(7)} ${word(8)}`,
    category: 'synthetic',
    weight: 1,
    source: 'base',
  }));
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return lines.map((l) => l.prompt + l.completion + '\n').join('');
}

const steadyRate = (windows: Array<{ tokens_per_s: number } | MetricLine>) => {
  const w = windows.length > 1 ? windows.slice(1) : windows;
  return w.reduce((s, x) => s + Number(x.tokens_per_s), 0) / w.length;
};

function main(): void {
  const { values } = parseArgs({
    options: {
      steps: { type: 'string', default: '80' },
      threads: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '2' },
    },
  });
  const steps = Number(values.steps);
  const home = resolveConfig(process.env, process.cwd()).home;
  if (!hfEnvReady(home)) throw new Error(`no hf-venv under ${home}: run \`flywheel setup hf\` (or set FLYWHEEL_HF_PYTHON)`);
  const python = hfPython(home);
  const env = { ...process.env, FLYWHEEL_TORCH_THREADS: values.threads, OMP_NUM_THREADS: values.threads };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-bench-'));
  try {
    const data = path.join(dir, 'data');
    fs.mkdirSync(data);
    const text = writeExamples(path.join(data, 'train.jsonl'), 500);
    fs.writeFileSync(path.join(data, 'train.txt'), text);
    fs.writeFileSync(path.join(dir, 'text.txt'), text);
    const model = path.join(dir, 'model');
    // prettier-ignore
    execFileSync(python, [TINY_MODEL, '--out', model, '--text', path.join(dir, 'text.txt'), '--layers', String(MODEL.layers),
      '--hidden', String(MODEL.hidden), '--heads', String(MODEL.heads), '--vocab-size', String(MODEL.vocab)], { env, stdio: 'ignore' });
    console.log(
      `model: Llama ${JSON.stringify(MODEL)}; config ${JSON.stringify({ ...CONFIG, steps })}; ${values.threads} threads each, one at a time`,
    );

    const ours = (round: number): number => {
      const runDir = path.join(dir, `run-${round}`);
      fs.mkdirSync(runDir);
      const run: RunJson = {
        runId: 'bench',
        experimentId: 'bench',
        recipe: 'hf',
        params: { model, ...CONFIG, steps },
        seed: 1,
        dataset: { versionId: 'bench', path: data, trainFile: 'train.txt', examplesFile: path.join(data, 'train.jsonl') },
        baseCheckpoint: null,
        checkpointEvery: 0,
      };
      fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(run));
      const r = spawnSync(python, [MAIN, 'train', '--run-dir', runDir], { encoding: 'utf8', env });
      if (r.status !== 0) throw new Error(`the hf trainer failed: ${r.stderr.trim()}`);
      const lines = fs
        .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as MetricLine);
      return steadyRate(lines);
    };
    const bare = (): number => {
      // prettier-ignore
      const r = spawnSync(python, [BARE, '--model', model, '--examples', path.join(data, 'train.jsonl'), '--steps', String(steps),
        '--batch', String(CONFIG.batchSize), '--max-length', String(CONFIG.maxLength), '--lr', String(CONFIG.lr),
        '--log-every', String(CONFIG.logEvery), '--seed', '1', '--threads', values.threads!, '--out', path.join(dir, 'bare-out')],
        { encoding: 'utf8', env });
      if (r.status !== 0) throw new Error(`the bare TRL script failed: ${r.stderr.trim()}`);
      const windows = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{"step"'))
        .map((l) => JSON.parse(l) as { tokens_per_s: number });
      return steadyRate(windows);
    };

    const a: number[] = [];
    const b: number[] = [];
    for (let round = 1; round <= Number(values.rounds); round++) {
      a.push(ours(round));
      b.push(bare());
      console.log(`round ${round}: hf trainer ${a[a.length - 1].toFixed(0)} tokens/s, bare TRL ${b[b.length - 1].toFixed(0)} tokens/s`);
    }
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    console.log(
      `hf trainer ${mean(a).toFixed(0)} tokens/s vs bare TRL ${mean(b).toFixed(0)} tokens/s: ratio ${(mean(a) / mean(b)).toFixed(3)} (target >= 0.95)`,
    );
    console.log(`load average ${loadAverage()} on ${os.cpus().length} cores`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
