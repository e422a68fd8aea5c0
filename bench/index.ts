// The benchmarks, one line each: what they measure and how to run them (`node bin/run-ts.js FILE [ARGS]`). Nothing
// here is asserted by tests; each prints figures and ratios.
export interface BenchEntry {
  file: string;
  args?: string;
  measures: string;
}

export const BENCHES: BenchEntry[] = [
  { file: 'bench/stack-startup.ts', measures: '`flywheel up` to ready, cold and warm; peak memory; the workflow-bundle cache' },
  { file: 'bench/orchestration-overhead.ts', args: '[N] [PARALLEL]', measures: "an experiment's wall time minus its trainer's, by activity" },
  { file: 'bench/sample-efficiency.ts', args: '[--quick]', measures: 'held-out score of the best-by-public config after 8/16/32 trials, TPE vs random, same seeds' },
  { file: 'bench/agent-proposer.ts', args: '[--quick] [--reps N] [--trials N]', measures: 'the hybrid proposer agent (a configured endpoint, or a scripted local one) vs TPE vs random: held-out of the best-by-public per trial count, same budget and seeds' },
  { file: 'bench/charlm-throughput.ts', measures: "the built-in trainer's bytes/s and bits per byte before/after" },
  { file: 'bench/feedback-throughput.ts', measures: 'feedback events/s through the HTTP API into PostgreSQL, single and batched' },
  { file: 'bench/torch-throughput.ts', args: '[--steps N] [--threads N]', measures: "the PyTorch trainer's tokens/s, bits per byte and (on a GPU) MFU" },
  { file: 'bench/idle-gap.ts', args: '[N]', measures: 'idle time between consecutive experiments on one slot, per backend' },
  { file: 'bench/launch-latency.ts', args: '[N]', measures: 'launch-to-first-metric latency per backend' },
  { file: 'bench/outer-iteration.ts', args: '[ITER] [EXPERIMENTS] [FEEDBACK]', measures: "each outer iteration's wall time minus its inner loop's, by activity" },
];
