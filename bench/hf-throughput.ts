// Whole-run throughput of the Hugging Face trainer (trainers/hf/main.py train on a run directory, as a campaign runs
// it) against a bare TRL SFTTrainer script of the same config (bench/hf-bare-trl.py: the same model, examples, SFT
// settings, steps and threads), in one run. Each run is timed whole, from the process's start to its exit after the
// trained weights are written (ours: the frozen checkpoint listed in the manifest; the peer: save_model), so
// start-up imports, tokenization, callbacks, metric writes and checkpoint saving all count. Repeats alternate the
// order (A B, B A, ...) so both see the same machine; prints each run's tokens/s (non-padding tokens trained over
// the whole run's wall time), the median and spread of each side, the ratio of medians, and the load average.
// Run: npm run bench -- hf-throughput [--steps N] [--threads N] [--repeats N]   (needs the hf-venv: flywheel setup hf)
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
/** One run's wall-clock limit: a hung trainer ends the bench with a reason instead of holding it. */
const RUN_LIMIT_MS = 30 * 60_000;

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

interface WholeRun {
  tokens: number;
  seconds: number;
}
const rate = (r: WholeRun) => r.tokens / r.seconds;

/** Runs `python args` to its end, timed from spawn to exit; throws with the last stderr line when it fails. */
function timed(python: string, args: string[], env: NodeJS.ProcessEnv, what: string): { seconds: number; stdout: string } {
  const started = process.hrtime.bigint();
  const r = spawnSync(python, args, { encoding: 'utf8', env, timeout: RUN_LIMIT_MS, killSignal: 'SIGKILL', maxBuffer: 64 << 20 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.status !== 0) {
    const last = r.stderr.trim().split('\n').at(-1) ?? '';
    throw new Error(`${what} failed (${r.signal ?? `exit ${r.status}`}): ${last}`);
  }
  return { seconds, stdout: r.stdout };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}`;

function main(): void {
  const { values } = parseArgs({
    options: {
      steps: { type: 'string', default: '200' },
      threads: { type: 'string', default: '2' },
      repeats: { type: 'string', default: '3' },
    },
  });
  const steps = Number(values.steps);
  const repeats = Number(values.repeats);
  if (!(Number.isInteger(steps) && steps > 0 && Number.isInteger(repeats) && repeats > 0))
    throw new Error(`--steps and --repeats must be positive integers (got ${values.steps}, ${values.repeats})`);
  const home = resolveConfig(process.env, process.cwd()).home;
  if (!hfEnvReady(home)) throw new Error(`no hf-venv under ${home}: run \`flywheel setup hf\` (or set FLYWHEEL_HF_PYTHON)`);
  const python = hfPython(home);
  const env = { ...process.env, FLYWHEEL_TORCH_THREADS: values.threads, OMP_NUM_THREADS: values.threads, HF_HUB_OFFLINE: '1' };
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
      `model: Llama ${JSON.stringify(MODEL)}; config ${JSON.stringify({ ...CONFIG, steps })}; ${values.threads} threads each, one at a time; ` +
        `whole runs (process start to weights written), ${repeats} repeats in alternating order`,
    );

    let n = 0;
    const ours = (): WholeRun => {
      const runDir = path.join(dir, `run-${++n}`);
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
      const { seconds } = timed(python, [MAIN, 'train', '--run-dir', runDir], env, 'the hf trainer');
      const manifest = JSON.parse(fs.readFileSync(path.join(runDir, 'checkpoints', 'manifest.json'), 'utf8')) as {
        checkpoints: { step: number }[];
      };
      if (!manifest.checkpoints.some((c) => c.step === steps)) throw new Error(`the hf trainer listed no checkpoint of step ${steps}`);
      const lines = fs
        .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as MetricLine);
      return { tokens: Number(lines.at(-1)!.tokens), seconds };
    };
    const bare = (): WholeRun => {
      const out = path.join(dir, `bare-${++n}`);
      // prettier-ignore
      const { seconds, stdout } = timed(python, [BARE, '--model', model, '--examples', path.join(data, 'train.jsonl'), '--steps', String(steps),
        '--batch', String(CONFIG.batchSize), '--max-length', String(CONFIG.maxLength), '--lr', String(CONFIG.lr),
        '--log-every', String(CONFIG.logEvery), '--seed', '1', '--threads', values.threads!, '--out', out], env, 'the bare TRL script');
      if (!fs.existsSync(path.join(out, 'model.safetensors'))) throw new Error(`the bare TRL script wrote no ${out}/model.safetensors`);
      const end = stdout
        .split('\n')
        .filter((l) => l.startsWith('{"tokens"'))
        .map((l) => JSON.parse(l) as { tokens: number })
        .at(-1);
      if (!end) throw new Error('the bare TRL script printed no {"tokens": N} line');
      return { tokens: end.tokens, seconds };
    };

    const a: WholeRun[] = [];
    const b: WholeRun[] = [];
    const show = (r: WholeRun) => `${rate(r).toFixed(0)} tokens/s (${r.tokens} tokens in ${r.seconds.toFixed(1)} s)`;
    for (let i = 1; i <= repeats; i++) {
      if (i % 2) (a.push(ours()), b.push(bare()));
      else (b.push(bare()), a.push(ours()));
      console.log(
        `repeat ${i} (${i % 2 ? 'hf first' : 'bare first'}): hf trainer ${show(a.at(-1)!)}; bare TRL ${show(b.at(-1)!)}; load ${loadAverage()}`,
      );
    }
    const ra = a.map(rate);
    const rb = b.map(rate);
    console.log(
      `hf trainer median ${median(ra).toFixed(0)} tokens/s (spread ${spread(ra)}) vs bare TRL median ${median(rb).toFixed(0)} tokens/s ` +
        `(spread ${spread(rb)}): ratio ${(median(ra) / median(rb)).toFixed(3)} (target >= 0.95)`,
    );
    console.log(`load average ${loadAverage()} on ${os.cpus().length} cores`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
