// `npm run bench -- NAME [ARGS...]`: runs one bench by name; with no name, lists them. Each bench is also runnable
// on its own with `node bin/run-ts.js bench/FILE.ts`. Add a line here for a new bench.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const BENCHES: Record<string, { file: string; measures: string }> = {
  'stack-startup': { file: 'stack-startup.ts', measures: '`flywheel up` to ready, cold and warm' },
  'orchestration-overhead': {
    file: 'orchestration-overhead.ts',
    measures: "an experiment's orchestration and its slot wait, apart, beside a peer making the same activity calls as no-ops",
  },
  'dispatch-latency': {
    file: 'dispatch-latency.ts',
    measures: "activity and workflow-task dispatch on the dev server with Flywheel's dynamic configuration beside the server's defaults",
  },
  'experiment-shape': {
    file: 'experiment-shape.ts',
    measures: "Temporal's cost of a child workflow per experiment beside the same calls as coroutines of one workflow, bare",
  },
  'durable-throughput': {
    file: 'durable-throughput.ts',
    measures: 'durable no-op experiments/s at parallelism 1 and 8 beside Optuna on the same PostgreSQL',
  },
  'warm-train': {
    file: 'warm-train.ts',
    measures: 'wall and machine CPU per run through the local backend, one-shot beside a warm `train --serve`, per trainer',
  },
  'file-op-cost': {
    file: 'file-op-cost.ts',
    measures: "CPU per file operation (a small file, a folder, a copy) on FLYWHEEL_HOME's filesystem beside a RAM-backed one",
  },
  'cpu-per-experiment': {
    file: 'cpu-per-experiment.ts',
    measures: "an experiment's CPU by process (workers, Temporal, PostgreSQL, the rest) and its SQL statements, one-shot and warm predict",
  },
  scale: {
    file: 'scale.ts',
    measures: "campaigns of no-op experiments: experiments/s over time, history sizes against Temporal's limits, rows, memory, pages",
  },
  'sample-efficiency': { file: 'sample-efficiency.ts', measures: 'held-out score after 8/16/32 trials, TPE vs random' },
  'charlm-throughput': { file: 'charlm-throughput.ts', measures: "the built-in trainer's bytes/s" },
  'feedback-throughput': { file: 'feedback-throughput.ts', measures: 'feedback events/s through the HTTP API' },
  'torch-throughput': { file: 'torch-throughput.ts', measures: "the PyTorch trainer's tokens/s" },
  'hf-throughput': {
    file: 'hf-throughput.ts',
    measures: "the Hugging Face trainer's tokens/s beside a bare TRL script of the same config on the same cores",
  },
  'idle-gap': { file: 'idle-gap.ts', measures: 'idle time between consecutive experiments on one slot' },
  'launch-latency': { file: 'launch-latency.ts', measures: 'time from launch to the first metric' },
  'launch-spawn-cost': {
    file: 'launch-spawn-cost.ts',
    measures: "the worker's CPU and longest event-loop stall per local launch, forking the worker beside its spawn helper",
  },
  'outer-iteration': { file: 'outer-iteration.ts', measures: 'one outer iteration end to end' },
  'arithmetic-task': {
    file: 'arithmetic-task.ts',
    measures: "the arithmetic task's held-out pass rate per category: untrained, after one inner loop, after each of 3 outer iterations",
  },
  'agent-proposer': {
    file: 'agent-proposer.ts',
    measures: 'the hybrid proposer agent vs TPE vs random: held-out of the best-by-public per trial count',
  },
  'outer-ablation': {
    file: 'outer-ablation.ts',
    measures:
      'the outer loop on the arithmetic task: critique-derived signals vs reference-only vs no feedback, equal compute, held-out pass rate per arm and iteration',
  },
  'gate-noise': {
    file: 'gate-noise.ts',
    measures: "the gate's false-rejection and false-acceptance rates over seeds, with its noise check and without",
  },
  'heldout-reuse': {
    file: 'heldout-reuse.ts',
    measures:
      "an adaptive analyst against the gate (candidates with no true improvement, whatever is promoted kept): false promotions per gate and per campaign, held-out claims against the sealed test split, today's gate beside the held-out budget and α-spending",
  },
  'eval-integrity': { file: 'eval-integrity.ts', measures: "eval scoring items/s per grader kind; the gate's detection table over seeds" },
  'sandbox-startup': {
    file: 'sandbox-startup.ts',
    measures: "the trainer sandbox's start-up cost per launch (median of 50) against an unsandboxed launch",
  },
  'code-experiments': {
    file: 'code-experiments.ts',
    measures:
      "a recipe patch's overhead (checks, apply and commit, materialize, record; median and p95 of N) beside a no-op knob experiment's wall time",
  },
  'dataset-add': {
    file: 'dataset-add.ts',
    measures: '`dataset add` lines/s and peak memory for 1,000,000 lines, beside reading and JSON.parsing the same file',
  },
  'hf-serve': {
    file: 'hf-serve.ts',
    measures: "Flywheel's HF inference server: completions/s batched vs unbatched; a promotion under load (answers, failures, switch time)",
  },
  'dashboard-pages': {
    file: 'dashboard-pages.ts',
    measures: 'dashboard page time (median, p95 of 50) at 10,000 experiments and 1,000,000 metric points',
  },
};

const [name, ...args] = process.argv.slice(2);
if (!name) {
  for (const [n, b] of Object.entries(BENCHES)) console.log(`${n.padEnd(24)} ${b.measures}`);
  process.exit(0);
}
const bench = BENCHES[name];
if (!bench) {
  console.error(`bench: unknown bench "${name}" (known: ${Object.keys(BENCHES).join(', ')})`);
  process.exit(2);
}
const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'run-ts.js'), path.join(__dirname, bench.file), ...args], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
