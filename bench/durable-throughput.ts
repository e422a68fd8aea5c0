// Durable no-op throughput: an inner loop of N experiments on the fixture trainer (a Node process that does nothing)
// at parallelism 1 and 8, each durable in Temporal and PostgreSQL, its public split answered by a one-shot `predict`
// process per experiment and by the campaign's warm `predict --serve` (trainer.warmPredict), beside its peer in the
// same run: Optuna with a
// PostgreSQL storage on the same server, n_jobs 1 and 8, with a no-op objective and with one that starts a Node
// process per trial as Flywheel starts its trainer. Optuna goes into a venv of the bench's own (pip install optuna
// psycopg2-binary under the temp dir, kept between runs). Target: Flywheel >= 1/3 of Optuna's rate.
// Run: node bin/run-ts.js bench/durable-throughput.ts [N]   (default 100; DATABASE_URL: use that server)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { like } from 'drizzle-orm';
import { experiments } from '../db/schema';
import { ensureDatabase } from '../db/embedded-server';
import { dropDatabase, startBenchStack, type BenchStack } from './lib/bench-stack';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';
import { runNoopLoop, type ExperimentShape } from './lib/noop-campaign';

const VENV = path.join(os.tmpdir(), 'flywheel-bench-optuna-venv');
const PEER = path.join(__dirname, 'lib', 'optuna-peer.py');

/** The venv's python, installing Optuna and the PostgreSQL driver into it the first time. */
function optunaPython(): string {
  const py = path.join(VENV, 'bin', 'python');
  const ready = () => {
    try {
      execFileSync(py, ['-c', 'import optuna, psycopg2'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (!ready()) {
    console.log(`installing optuna and psycopg2-binary into ${VENV} (once)`);
    execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
    execFileSync(path.join(VENV, 'bin', 'pip'), ['install', '-q', 'optuna', 'psycopg2-binary'], { stdio: 'inherit' });
  }
  return py;
}

/** Optuna trials/s on `storage`, `jobs` at a time; with `spawn`, a Node process per trial. */
function optunaRate(py: string, storage: string, study: string, n: number, jobs: number, spawn: boolean): number {
  const out = execFileSync(py, [PEER, storage, study, String(n), String(jobs), ...(spawn ? [process.execPath] : [])], {
    encoding: 'utf8',
  });
  const r = JSON.parse(out.trim().split('\n').pop()!) as { trials: number; seconds: number };
  return r.trials / r.seconds;
}

/**
 * Flywheel experiments/s for one inner loop of `n` no-op experiments, `parallel` at a time (and as many slots), with
 * a warm predict server or a predict process per experiment.
 */
async function flywheelRate(
  stack: BenchStack,
  name: string,
  n: number,
  parallel: number,
  warm: boolean,
  shape: ExperimentShape = 'child',
): Promise<{ loop: number; steady: number }> {
  const t0 = performance.now();
  const wf = await runNoopLoop(stack, name, { n, parallel, warmPredict: warm, shape, proposer: 'random' });
  const loopSeconds = (performance.now() - t0) / 1000;
  // Steady rate: experiments finished per second between the first finish and the last (no set-up, no winner scoring).
  const rows = await stack.db.db
    .select({ finishedAt: experiments.finishedAt, status: experiments.status })
    .from(experiments)
    .where(like(experiments.id, `${wf}/e%`));
  if (rows.some((r) => r.status !== 'succeeded')) throw new Error(`${name}: not every experiment succeeded`);
  const ends = rows.map((r) => r.finishedAt!.getTime()).sort((a, b) => a - b);
  return { loop: n / loopSeconds, steady: (ends.length - 1) / ((ends[ends.length - 1] - ends[0]) / 1000) };
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 100);
  if (!Number.isInteger(n) || n < 8) {
    console.error('usage: bench/durable-throughput.ts [N]: N an integer of at least 8 (the widest case runs 8 at once)');
    process.exit(2);
  }
  const py = optunaPython();
  const stack = await startBenchStack(55495, { databaseUrl: process.env.DATABASE_URL });
  // A database of this run's own, dropped at the end: Optuna's study names are unique per storage.
  const optunaName = `optuna_bench_${Date.now().toString(36)}`;
  try {
    const optunaDb = await ensureDatabase(stack.adminUrl, optunaName);
    const storage = optunaDb.replace(/^postgres(ql)?:\/\//, 'postgresql+psycopg2://');
    console.log(
      `durable no-op throughput, ${n} per case, ${os.cpus().length} CPUs, PostgreSQL ${process.env.DATABASE_URL ? 'from DATABASE_URL' : 'embedded'}`,
    );
    await flywheelRate(stack, 'tp-warmup', 4, 2, true);
    console.log(
      '\nparallel  predict   shape   flywheel_loop/s  flywheel_steady/s  optuna/s  optuna+node/s  steady/optuna  steady/optuna+node  load',
    );
    // Experiments as child workflows (the default) with each predict; inline (innerLoop.experimentWorkflows) and inline
    // with warm trainers (trainer.warmTrain), both with the warm predict.
    const cases = [
      [false, 'child'],
      [true, 'child'],
      [true, 'inline'],
      [true, 'warm'],
    ] as const;
    for (const parallel of [1, 8]) {
      const bare = optunaRate(py, storage, `tp-${parallel}-bare`, n, parallel, false);
      const spawn = optunaRate(py, storage, `tp-${parallel}-node`, n, parallel, true);
      for (const [warm, shape] of cases) {
        const name = `tp-${parallel}-${warm ? 'warm' : 'oneshot'}-${shape}`;
        const fw = await flywheelRate(stack, name, n, parallel, warm, shape);
        console.log(
          `${String(parallel).padStart(8)}  ${(warm ? 'warm' : 'one-shot').padEnd(8)}  ${shape.padEnd(6)} ${fw.loop.toFixed(2).padStart(15)} ${fw.steady.toFixed(2).padStart(18)} ` +
            `${bare.toFixed(1).padStart(9)} ${spawn.toFixed(1).padStart(14)} ${(fw.steady / bare).toFixed(3).padStart(14)} ${(fw.steady / spawn).toFixed(3).padStart(19)}  ${loadAverage()}`,
        );
      }
    }
    console.log('\nflywheel_loop: the inner loop start to result (set-up, baseline and held-out scoring of the winner included)');
    console.log('each Flywheel experiment also has its public split answered (one-shot: a predict process of its own; warm: a request to');
    console.log("the campaign's predict server) and graded; an Optuna trial does neither; shape: each experiment a child workflow,");
    console.log("or a coroutine of the loop's workflow (innerLoop.experimentWorkflows: inline), or inline with its runs served by");
    console.log('warm trainers (trainer.warmTrain: a sandboxed `train --serve` process serving many runs)');
  } finally {
    await dropDatabase(stack.adminUrl, optunaName);
    await stack.stop();
    if (fs.existsSync(VENV)) console.log(`(optuna venv kept at ${VENV})`);
  }
}

runBench(main);
