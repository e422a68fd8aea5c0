// Where an experiment's CPU goes: one inner loop of N no-op experiments (the fixture trainer), PARALLEL at a time, on
// the bench stack, with a one-shot predict per experiment and then with the campaign's warm predict server (the pair
// compared in the same run). Per experiment: CPU of this process (every worker, the workflows, the client), of the
// Temporal dev server, of PostgreSQL's processes, of the whole machine (the rest is chiefly the sandboxed trainer and
// predict processes, which bubblewrap reaps outside this process's accounts), and the SQL statements sent. On 2 cores
// the machine's CPU per experiment bounds throughput: 2,000 ms / (ms per experiment) experiments a second. A fixed piece
// of CPU work is timed before and after (bench/lib/machine-yardstick.ts): the ms figures hold for a machine that fast. Also per
// experiment: the requests the workers and the client sent Temporal's frontend (rpc/exp) and the persistence operations
// the server ran (persist/exp), from its /metrics counters, with the largest of each listed under the table.
// Run: node bin/run-ts.js bench/cpu-per-experiment.ts [--inline] [--warm-train] [N] [PARALLEL] [PREDICT] [REPEATS] [SETTINGS...]
// (defaults 200, 8, both, 1, the stack's own; DATABASE_URL: use that server). PREDICT: both, warm or one-shot. --inline:
// each case also with the experiments as coroutines of the loop's workflow (innerLoop.experimentWorkflows);
// --warm-train: each case also inline with warm trainers (trainer.warmTrain: the fixture's `train --serve`, shape
// `warm`); the shapes interleaved. For an A/B of Temporal's
// settings, each SETTINGS (bench/lib/temporal-settings.ts: JSON of server, serverEnv, orchestrationWorker; {} for the
// defaults) gets a stack of its own, all started first, and each repeat runs every case on each in turn (interleaved).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import pg from 'pg';
import { startBenchStack, type BenchStack } from './lib/bench-stack';
import { countsPer, readRequestCounts, totalOf } from './lib/temporal-metrics';
import { parseTemporalSettings, SETTINGS_USAGE, stackOptionsOf, type TemporalSettings } from './lib/temporal-settings';
import { loadAverage } from './lib/load-average';
import { machineTicks, TICK_MS, ticksOf } from './lib/process-cpu';
import { runBench } from './lib/run-bench';
import { yardstickLine } from './lib/machine-yardstick';
import { runNoopLoop, SHAPE_FLAGS, shapesOf } from './lib/noop-campaign';

/** Every statement any pg client of this process sends, counted while `counting` (a bench's own instrument). */
let statements = 0;
let counting = false;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (counting) statements++;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

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

/** VmHWM of a process, in MiB. */
function peakRssMiB(pid: number): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Math.round(Number(kb ?? 0) / 1024);
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

const PREDICT_MODES: Record<string, boolean[]> = { both: [false, true], warm: [true], 'one-shot': [false] };

interface Variant {
  label: string;
  stack: BenchStack;
  temporalPid: number;
}

/** One stack per SETTINGS variant, all started before any case runs, so each case of a repeat meets the same load. */
async function startVariants(texts: string[], settings: TemporalSettings[], parallel: number, stacks: BenchStack[]): Promise<Variant[]> {
  const variants: Variant[] = [];
  for (const [i, s] of settings.entries()) {
    const stack = await startBenchStack(55498 + i, { databaseUrl: process.env.DATABASE_URL, ...stackOptionsOf(s) });
    stacks.push(stack);
    const [temporalPid] = pids(['-f', `temporal server start-dev .*${stack.temporalAddress.split(':').pop()}`]);
    if (!temporalPid) throw new Error('cannot find the dev server process');
    await runNoopLoop(stack, 'cpu-warmup', {
      n: 8,
      parallel: Math.min(parallel, 4),
      warmPredict: true,
      shape: 'child',
      proposer: 'random',
    });
    variants.push({ label: texts[i] ?? '{}', stack, temporalPid });
  }
  return variants;
}

async function main(): Promise<void> {
  const { shapes, rest: argv } = shapesOf(process.argv);
  const n = Number(argv[2] ?? 200);
  const parallel = Number(argv[3] ?? 8);
  const predict = argv[4] ?? 'both';
  const modes = Object.hasOwn(PREDICT_MODES, predict) ? PREDICT_MODES[predict] : undefined;
  const repeats = Number(argv[5] ?? 1);
  const texts = argv.slice(6);
  const settings = (texts.length ? texts : ['{}']).map(parseTemporalSettings);
  if (![n, parallel, repeats].every((x) => Number.isInteger(x) && x > 0) || !modes || settings.some((s) => !s)) {
    console.error(
      `usage: bench/cpu-per-experiment.ts ${SHAPE_FLAGS} [N] [PARALLEL] [both|warm|one-shot] [REPEATS] [SETTINGS...]: positive integers; ${SETTINGS_USAGE}`,
    );
    process.exit(2);
  }
  const stacks: BenchStack[] = [];
  try {
    const variants = await startVariants(texts, settings as TemporalSettings[], parallel, stacks);
    console.log(
      `CPU per experiment (ms), ${n} no-op experiments ${parallel} at a time, PostgreSQL ${process.env.DATABASE_URL ? 'from DATABASE_URL' : 'embedded'}`,
    );
    if (texts.length) console.log(`settings, interleaved ${repeats} times: ${variants.map((v, i) => `[${i}] ${v.label}`).join('  ')}`);
    console.log(yardstickLine('before'));
    console.log('predict  shape   set  exp/s  machine  this_process  temporal  postgres  the_rest  sql/exp  rpc/exp  persist/exp  load');
    const largest: string[] = [];
    for (let rep = 0; rep < repeats; rep++)
      for (const warm of modes)
        for (const shape of shapes)
          for (const [i, v] of variants.entries()) {
            const requestsBefore = await readRequestCounts(v.stack.temporalMetricsUrl);
            const a = sample(v.temporalPid);
            statements = 0;
            counting = true;
            const t0 = performance.now();
            await runNoopLoop(v.stack, `cpu-${warm ? 'warm' : 'oneshot'}-${shape}-${rep}`, {
              n,
              parallel,
              warmPredict: warm,
              shape,
              proposer: 'random',
            });
            const seconds = (performance.now() - t0) / 1000;
            counting = false;
            const b = sample(v.temporalPid);
            const requests = countsPer(requestsBefore, await readRequestCounts(v.stack.temporalMetricsUrl), n);
            const per = (k: keyof Sample) => ((b[k] - a[k]) * TICK_MS) / n;
            const rest = per('machine') - per('self') - per('temporal') - per('postgres');
            console.log(
              `${(warm ? 'warm' : 'one-shot').padEnd(8)} ${shape.padEnd(6)} ${String(i).padStart(3)} ${(n / seconds).toFixed(2).padStart(6)} ${per('machine').toFixed(0).padStart(8)} ` +
                `${per('self').toFixed(0).padStart(13)} ${per('temporal').toFixed(0).padStart(9)} ${per('postgres').toFixed(0).padStart(9)} ` +
                `${rest.toFixed(0).padStart(9)} ${(statements / n).toFixed(1).padStart(8)} ${totalOf(requests, 'service_requests').toFixed(1).padStart(8)} ` +
                `${totalOf(requests, 'persistence_requests').toFixed(1).padStart(12)}  ${loadAverage()}`,
            );
            if (rep === 0)
              largest.push(
                `${warm ? 'warm' : 'one-shot'} ${shape} [${i}]: ${requests
                  .slice(0, 10)
                  .map(([k, c]) => `${k.split(':')[1]} ${c.toFixed(2)}`)
                  .join(', ')}`,
              );
          }
    console.log(`\nper experiment, the largest request counts (frontend requests and persistence operations):\n${largest.join('\n')}`);
    console.log(`the dev server's peak resident memory (MiB): ${variants.map((v, i) => `[${i}] ${peakRssMiB(v.temporalPid)}`).join('  ')}`);
    console.log(yardstickLine('after'));
    console.log('\nthis_process: the workers, the workflows and the client (every variant); the_rest: the trainer and predict processes');
    console.log(
      '(bubblewrap, node), their launchers, the kernel, and anything else running on the machine; exp/s includes the loop start and end',
    );
  } finally {
    // Each stack stops what it started; one that fails to stop does not keep the others running.
    await Promise.allSettled(stacks.map((stack) => stack.stop()));
  }
}

runBench(main);
