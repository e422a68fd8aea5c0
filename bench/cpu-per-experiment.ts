// Where an experiment's CPU goes: one inner loop of N no-op experiments (the fixture trainer), PARALLEL at a time, on
// the bench stack, with a one-shot predict per experiment and then with the campaign's warm predict server (the pair
// compared in the same run). Per experiment: CPU of this process (every worker, the workflows, the client), of the
// Temporal dev server, of PostgreSQL's processes, of the whole machine (the rest is chiefly the sandboxed trainer and
// predict processes, which bubblewrap reaps outside this process's accounts), and the SQL statements sent. On 2 cores
// the machine's CPU per experiment bounds throughput: 2,000 ms / (ms per experiment) experiments a second.
// Run: node bin/run-ts.js bench/cpu-per-experiment.ts [N] [PARALLEL]   (defaults 200, 8; DATABASE_URL: use that server)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { fixtureSpec } from '../test/helpers/specs';
import { startBenchStack, type BenchStack } from './lib/bench-stack';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';

const TICK_MS = 1000 / 100; // USER_HZ

/** Every statement any pg client of this process sends, counted while `counting` (a bench's own instrument). */
let statements = 0;
let counting = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) statements++;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

/** utime + stime of a process, in ticks. */
function ticksOf(pid: number | 'self'): number {
  const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

function pids(args: string[]): number[] {
  try {
    return execFileSync('pgrep', args, { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function sumTicks(list: number[]): number {
  return list.reduce((n, pid) => {
    try {
      return n + ticksOf(pid);
    } catch {
      return n; // ended between the listing and the read
    }
  }, 0);
}

/** Busy ticks of the whole machine (user, nice, system, irq, softirq, steal). */
function machineTicks(): number {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
}

interface Sample {
  self: number;
  temporal: number;
  postgres: number;
  machine: number;
}

function sample(temporalPid: number): Sample {
  return {
    self: ticksOf('self'),
    temporal: sumTicks([temporalPid]),
    postgres: sumTicks(pids(['-x', 'postgres'])),
    machine: machineTicks(),
  };
}

async function runLoop(stack: BenchStack, name: string, n: number, parallel: number, warm: boolean): Promise<void> {
  const base = fixtureSpec(
    name,
    { steps: 1, sleepMs: 0 },
    { budget: { experiments: n, parallelism: parallel }, batchSize: Math.max(parallel, 4), proposer: 'random', plateau: { patience: 1e6 } },
  );
  const spec = { ...base, trainer: { ...base.trainer, warmPredict: warm }, backend: { kind: 'local', maxConcurrent: parallel } };
  const { versionId } = await registerCampaignVersion(stack.db.db, spec);
  await stack.client.workflow.execute('innerLoop', {
    taskQueue: `${stack.prefix}-orchestration`,
    workflowId: `${name}/inner/1`,
    args: [{ campaignVersionId: versionId }],
  });
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 200);
  const parallel = Number(process.argv[3] ?? 8);
  if (!Number.isInteger(n) || n < 1 || !Number.isInteger(parallel) || parallel < 1) {
    console.error('usage: bench/cpu-per-experiment.ts [N] [PARALLEL]: positive integers');
    process.exit(2);
  }
  const stack = await startBenchStack(55498, { databaseUrl: process.env.DATABASE_URL });
  try {
    const [temporalPid] = pids(['-f', `temporal server start-dev .*${stack.temporalAddress.split(':').pop()}`]);
    if (!temporalPid) throw new Error('cannot find the dev server process');
    await runLoop(stack, 'cpu-warmup', 8, Math.min(parallel, 4), true);
    console.log(
      `CPU per experiment (ms), ${n} no-op experiments ${parallel} at a time, PostgreSQL ${process.env.DATABASE_URL ? 'from DATABASE_URL' : 'embedded'}`,
    );
    console.log('predict    exp/s  machine  this_process  temporal  postgres  the_rest  sql/exp  load');
    for (const warm of [false, true]) {
      const a = sample(temporalPid);
      statements = 0;
      counting = true;
      const t0 = performance.now();
      await runLoop(stack, `cpu-${warm ? 'warm' : 'oneshot'}`, n, parallel, warm);
      const seconds = (performance.now() - t0) / 1000;
      counting = false;
      const b = sample(temporalPid);
      const per = (k: keyof Sample) => ((b[k] - a[k]) * TICK_MS) / n;
      const rest = per('machine') - per('self') - per('temporal') - per('postgres');
      console.log(
        `${(warm ? 'warm' : 'one-shot').padEnd(9)} ${(n / seconds).toFixed(2).padStart(6)} ${per('machine').toFixed(0).padStart(8)} ` +
          `${per('self').toFixed(0).padStart(13)} ${per('temporal').toFixed(0).padStart(9)} ${per('postgres').toFixed(0).padStart(9)} ` +
          `${rest.toFixed(0).padStart(9)} ${(statements / n).toFixed(1).padStart(8)}  ${loadAverage()}`,
      );
    }
    console.log('\nthis_process: the workers, the workflows and the client; the_rest: the trainer and predict processes (bubblewrap,');
    console.log('node), their launchers, the kernel, and anything else running on the machine; exp/s includes the loop start and end');
  } finally {
    await stack.stop();
  }
}

runBench(main);
