// Launch-to-first-metric latency per training backend: the time from launch() to the trainer's first line in
// metrics.jsonl, for the fixture trainer, median and min/max over N runs one after another. Local always; Slurm when
// `sinfo` answers; Ray when the Jobs API answers (.ci/start-slurm.sh, .ci/start-ray.sh). Nothing here is asserted.
// Run: node bin/run-ts.js bench/launch-latency.ts [N]   (default 5)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TrainingBackend } from '../backends';
import { LocalBackend } from '../backends/local/local-backend';
import { RayBackend } from '../backends/ray/ray-backend';
import { RayJobsClient } from '../backends/ray/ray-jobs-client';
import { SlurmBackend } from '../backends/slurm/slurm-backend';
import { runBench } from './lib/run-bench';

const FIXTURE_TRAINER = path.join(__dirname, '..', 'test', 'fixtures', 'fixture-trainer.js');

async function available(): Promise<Array<[string, TrainingBackend]>> {
  const out: Array<[string, TrainingBackend]> = [['local', new LocalBackend()]];
  try {
    execFileSync('sinfo', ['-h'], { stdio: 'ignore', timeout: 10_000 });
    out.push(['slurm', new SlurmBackend({ statusIntervalMs: 100 })]);
  } catch {
    console.log('slurm: skipped (sinfo does not answer; bash .ci/start-slurm.sh)');
  }
  try {
    const v = await new RayJobsClient({ timeoutMs: 5000 }).version();
    out.push([`ray ${v.ray_version}`, new RayBackend({ statusIntervalMs: 100 })]);
  } catch {
    console.log('ray: skipped (no Jobs API answers; bash .ci/start-ray.sh)');
  }
  return out;
}

/** One run: ms from launch() to the first metric line; then waits for the job to end so runs do not overlap. */
async function once(b: TrainingBackend, root: string, label: string, i: number): Promise<number> {
  const runId = `bench-${label.split(' ')[0]}-${process.pid}-${Date.now()}-${i}`;
  const runDir = path.join(root, runId);
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify({ runId, params: { steps: 3 }, checkpointEvery: 0 }));
  const metrics = path.join(runDir, 'metrics.jsonl');
  const t0 = performance.now();
  const h = await b.launch({ runId, runDir, argv: [process.execPath, FIXTURE_TRAINER, 'train', '--run-dir', runDir] });
  const deadline = Date.now() + 120_000;
  while (!(fs.existsSync(metrics) && fs.statSync(metrics).size > 0)) {
    if (Date.now() > deadline) throw new Error(`${label}: no metric within 120 s (${runDir})`);
    await sleep(2);
  }
  const ms = performance.now() - t0;
  for (;;) {
    const s = await b.status(h);
    if (s.state !== 'running') {
      if (s.state !== 'succeeded') throw new Error(`${label}: run ${runId} ended ${s.state} (exit ${s.exitCode})`);
      return ms;
    }
    await sleep(50);
  }
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 5);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'fw-launch-latency-'));
  console.log(
    `launch-to-first-metric latency, fixture trainer (3 steps), ${n} runs per backend, one at a time (${os.cpus().length}-core machine)`,
  );
  const rows: string[] = [];
  for (const [label, b] of await available()) {
    await once(b, root, label, -1); // warm-up, not counted: first-use costs (node's page cache, Ray's worker pool)
    const xs: number[] = [];
    for (let i = 0; i < n; i++) xs.push(await once(b, root, label, i));
    xs.sort((a, c) => a - c);
    const median = xs.length % 2 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2;
    rows.push(
      `${label.padEnd(12)} ${median.toFixed(0).padStart(9)} ${xs[0].toFixed(0).padStart(7)} ${xs[xs.length - 1].toFixed(0).padStart(7)}`,
    );
  }
  console.log('backend      median_ms  min_ms  max_ms');
  for (const r of rows) console.log(r);
  fs.rmSync(root, { recursive: true, force: true });
}

runBench(main);
