// Training throughput of the reference PyTorch trainer on the built-in corpus, run as a campaign runs it
// (python3 main.py train on a run directory): tokens/s, the last logging window's training bits per byte,
// MFU when it ran on CUDA, and the public split's exact-token accuracy through predict and Flywheel's grader.
// Run: node bin/run-ts.js bench/torch-throughput.ts [--steps N] [--threads N]   (CPU unless CUDA is present)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildBuiltinCorpus, collectBuiltinCorpus } from '../tasks/builtin-code/corpus';
import { runPredict } from '../activities/eval/run-predict';
import { trainerSetupOf } from '../activities/training/trainer-isolation';
import { parseSpec } from '../tasks/task-spec';
import { buildCompletionItems } from '../tasks/builtin-code/eval-items';
import { COMPLETION_BUDGET, gradeExactToken } from '../core/graders';
import type { MetricLine, RunJson } from '../core/job-contract';
import { runBench } from './lib/run-bench';

const MAIN = path.join(__dirname, '..', 'trainers', 'torch', 'main.py');
const PARAMS = { n_layer: 2, n_head: 4, d_model: 64, context: 64, batchSize: 16, lr: 0.003, lrWarmup: 20, logEvery: 50 };

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { steps: { type: 'string', default: '300' }, threads: { type: 'string', default: '1' } } });
  const steps = Number(values.steps);
  // One thread by default: figures comparable across runs on a shared machine, and a fair share of it.
  // Set in this process's environment, which train (spawned here) and predict (runPredict) inherit.
  process.env.FLYWHEEL_TORCH_THREADS = values.threads;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'torch-bench-'));
  try {
    const manifest = await buildBuiltinCorpus(path.join(dir, 'data'));
    const pub = (await collectBuiltinCorpus()).splits.public;
    const completions = buildCompletionItems('public', pub, { count: 100, seed: 1 });
    const runDir = path.join(dir, 'run');
    fs.mkdirSync(runDir);
    const run: RunJson = {
      runId: 'bench',
      experimentId: 'bench',
      recipe: 'custom',
      params: { ...PARAMS, steps },
      seed: 1,
      dataset: { versionId: 'bench', path: path.join(dir, 'data'), trainFile: 'train.txt' },
      baseCheckpoint: null,
      checkpointEvery: 0,
    };
    fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify(run));
    console.log(`corpus: train ${manifest.splits.train.bytes} B; ${completions.length} public completion items`);
    console.log(`config: ${JSON.stringify({ ...PARAMS, steps })}, FLYWHEEL_TORCH_THREADS=${values.threads}`);

    const t0 = process.hrtime.bigint();
    const r = spawnSync('python3', [MAIN, 'train', '--run-dir', runDir], { encoding: 'utf8' });
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r.status !== 0) throw new Error(`train failed: ${r.stderr.trim()}`);
    const lines = fs
      .readFileSync(path.join(runDir, 'metrics.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as MetricLine);
    const last = lines[lines.length - 1];
    // The first window pays for warm-up (allocator, kernels): the steady rate is the mean of the others.
    const steady = lines.slice(1).map((l) => l.tokens_per_s);
    const tps = steady.length ? steady.reduce((a, b) => a + b, 0) / steady.length : last.tokens_per_s;
    const mfu = last.mfu === undefined ? 'n/a (no CUDA, and FLYWHEEL_PEAK_FLOPS unset)' : `${(100 * last.mfu).toFixed(1)}%`;
    console.log(`train: ${last.step} steps, ${last.tokens} tokens in ${wall.toFixed(1)} s wall (process start and torch import included)`);
    console.log(`  tokens/s ${tps.toFixed(0)} (steady windows), MFU ${mfu}`);
    console.log(`  training bits/byte: first window ${lines[0].loss.toFixed(3)} -> last window ${last.loss.toFixed(3)}`);

    const [ckpt] = JSON.parse(fs.readFileSync(path.join(runDir, 'checkpoints', 'manifest.json'), 'utf8')).checkpoints as { path: string }[];
    const p0 = process.hrtime.bigint();
    const predictions = await runPredict({
      trainer: trainerSetupOf(
        parseSpec({
          name: 'torch-bench',
          searchSpace: { steps: { type: 'categorical', choices: [steps] } },
          trainer: { command: ['python3', MAIN] },
        }),
        dir,
      ),
      checkpointFile: path.join(runDir, ckpt.path),
      prompts: completions.map((i) => ({ id: i.id, prompt: i.prompt, maxBytes: COMPLETION_BUDGET })),
    });
    const pwall = Number(process.hrtime.bigint() - p0) / 1e9;
    const right = completions.reduce((n, i) => n + gradeExactToken(predictions.get(i.id)!, i.reference), 0);
    console.log(
      `predict: ${completions.length} prompts in ${pwall.toFixed(1)} s; public exact-token accuracy ${((100 * right) / completions.length).toFixed(1)}%`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
