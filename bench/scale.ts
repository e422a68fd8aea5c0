// Scale: CAMPAIGNS campaigns at once, EXPERIMENTS no-op experiments in all (split evenly), PARALLEL running at once
// in each, on the dev server and a PostgreSQL (embedded, or the server in DATABASE_URL). Prints, every 10 s, the
// experiments finished and per second with the load average and this process's memory (the workers run in it);
// then each loop's workflow histories (one per continue-as-new run) and a sample of experiment histories against
// Temporal's limits (51,200 events and 50 MB per history, 2 MB per payload), PostgreSQL's rows and size, and the
// dashboard's page times on the finished campaign.
// Run: node bin/run-ts.js bench/scale.ts [EXPERIMENTS] [PARALLEL] [CAMPAIGNS]   (defaults 10000, 200, 1)
import os from 'node:os';
import { inArray, sql } from 'drizzle-orm';
import { temporal } from '@temporalio/proto';
import { experiments } from '../db/schema';
import { BASELINE_PROPOSER } from '../contracts/experiment';
import { startDashboard } from '../server/dashboard/server';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { fixtureSpec } from '../test/helpers/specs';
import { quantile, startBenchStack, type BenchStack } from './lib/bench-stack';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';

/** Temporal's per-execution limits (the server's defaults: history count and size error limits, blob size). */
const LIMITS = { events: 51_200, historyBytes: 50 * 1024 * 1024, payloadBytes: 2 * 1024 * 1024 };
const FINAL = ['succeeded', 'failed', 'pruned', 'timed_out', 'cancelled', 'rejected'];
const SAMPLE_EVERY_MS = 10_000;
/** Experiment histories read for the size table: they all take the same path, so a sample shows their spread. */
const EXPERIMENT_SAMPLE = 100;

const mib = (b: number) => (b / 1024 / 1024).toFixed(1);

interface HistorySize {
  id: string;
  runId: string;
  events: number;
  bytes: number;
  /** The largest single event, serialised: an upper bound on its largest payload. */
  largestEvent: number;
}

async function historySize(stack: BenchStack, workflowId: string, runId?: string): Promise<HistorySize> {
  const h = await stack.client.workflow.getHandle(workflowId, runId).fetchHistory();
  const events = h.events ?? [];
  return {
    id: workflowId,
    runId: runId ?? '',
    events: events.length,
    bytes: temporal.api.history.v1.History.encode(h).finish().length,
    largestEvent: Math.max(0, ...events.map((e) => temporal.api.history.v1.HistoryEvent.encode(e).finish().length)),
  };
}

/** Every run of a loop's workflow id: one per continue-as-new. */
async function loopRuns(stack: BenchStack, workflowId: string): Promise<HistorySize[]> {
  const sizes: HistorySize[] = [];
  for await (const w of stack.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    sizes.push(await historySize(stack, workflowId, w.runId));
  return sizes;
}

function printSizes(label: string, sizes: HistorySize[]): void {
  const worst = (f: (s: HistorySize) => number) => Math.max(0, ...sizes.map(f));
  const ev = worst((s) => s.events);
  const by = worst((s) => s.bytes);
  const pl = worst((s) => s.largestEvent);
  console.log(
    `${label.padEnd(34)} ${String(sizes.length).padStart(6)} ${String(ev).padStart(8)} ${((ev / LIMITS.events) * 100).toFixed(2).padStart(7)}% ` +
      `${mib(by).padStart(8)} ${((by / LIMITS.historyBytes) * 100).toFixed(3).padStart(8)}% ${(pl / 1024).toFixed(1).padStart(9)} ${((pl / LIMITS.payloadBytes) * 100).toFixed(3).padStart(8)}%`,
  );
}

/** Experiments of these campaigns that have finished, baselines aside. */
async function finishedCount(stack: BenchStack, names: string[]): Promise<number> {
  const [{ n }] = await stack.db.db
    .select({ n: sql<number>`count(*)::int` })
    .from(experiments)
    .where(
      sql`${experiments.campaignId} IN ${names} AND ${inArray(experiments.status, FINAL)} AND ${experiments.proposer} <> ${BASELINE_PROPOSER}`,
    );
  return n;
}

async function pageTimes(stack: BenchStack, campaign: string, loop: string, total: number): Promise<void> {
  const server = await startDashboard({ db: stack.db.db, port: 0 });
  const loops = 10;
  try {
    const last = Math.max(0, Math.ceil(total / 50) - 1);
    const l = encodeURIComponent(loop);
    const pages: Array<[string, string]> = [
      ['campaign list', '/'],
      ['campaign', `/campaigns/${encodeURIComponent(campaign)}`],
      ['inner loop, page 1', `/loops/${l}`],
      [`inner loop, page ${last + 1}`, `/loops/${l}?page=${last}`],
      ['loop charts (json)', `/loops/${l}/charts.json`],
      ['experiment', `/experiments/${encodeURIComponent(`${loop}/e7`)}`],
    ];
    console.log(`\ndashboard on the finished campaign: median and p95 of ${loops} loads (load ${loadAverage()})`);
    for (const [name, p] of pages) {
      const times: number[] = [];
      for (let i = 0; i < loops + 1; i++) {
        const t = performance.now();
        const res = await fetch(server.url + p);
        await res.text();
        if (res.status !== 200) throw new Error(`${p}: HTTP ${res.status}`);
        if (i > 0) times.push(performance.now() - t);
      }
      console.log(
        `  ${name.padEnd(26)} ${quantile(times, 0.5).toFixed(0).padStart(7)} ms ${quantile(times, 0.95).toFixed(0).padStart(7)} ms`,
      );
    }
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 10_000);
  const parallel = Number(process.argv[3] ?? 200);
  const nCampaigns = Number(process.argv[4] ?? 1);
  if (![total, parallel, nCampaigns].every((x) => Number.isInteger(x) && x > 0) || total < nCampaigns) {
    console.error('usage: bench/scale.ts [EXPERIMENTS] [PARALLEL] [CAMPAIGNS]: positive integers, EXPERIMENTS >= CAMPAIGNS');
    process.exit(2);
  }
  const each = Math.floor(total / nCampaigns);
  // Every running attempt holds a training activity slot while it follows its job; scoring holds an eval slot.
  const stack = await startBenchStack(55494, {
    databaseUrl: process.env.DATABASE_URL,
    activitySlots: parallel * nCampaigns + 16,
    poolSize: 40,
  });
  const names = Array.from({ length: nCampaigns }, (_, i) => `scale-${i}`);
  // Ctrl-C or a kill still stops the dev server and drops the bench's database.
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => {
      console.log(`\n${sig}: stopping the stack`);
      void stack.stop().finally(() => process.exit(130));
    });
  try {
    console.log(
      `scale: ${nCampaigns} campaign(s) x ${each} no-op experiments, ${parallel} at once in each; ${os.cpus().length} CPUs; ` +
        `PostgreSQL ${process.env.DATABASE_URL ? 'from DATABASE_URL' : 'embedded'}; load ${loadAverage()}`,
    );
    const t0 = performance.now();
    const loops = await Promise.all(
      names.map(async (name) => {
        const base = fixtureSpec(
          name,
          { steps: 1, sleepMs: 0 },
          {
            budget: { experiments: each, parallelism: parallel },
            batchSize: parallel,
            proposer: 'random',
            plateau: { patience: 1_000_000 },
          },
        );
        // The fixture trainer speaks `predict --serve`, as the built-in and hf trainers do by default.
        const spec = { ...base, trainer: { ...base.trainer, warmPredict: true }, backend: { kind: 'local', maxConcurrent: parallel } };
        const { versionId } = await registerCampaignVersion(stack.db.db, spec);
        const workflowId = `${name}/inner/1`;
        const h = await stack.client.workflow.start('innerLoop', {
          taskQueue: `${stack.prefix}-orchestration`,
          workflowId,
          args: [{ campaignVersionId: versionId }],
        });
        return { name, workflowId, done: h.result() };
      }),
    );
    let finished = false;
    const all = Promise.all(loops.map((l) => l.done)).finally(() => (finished = true));
    console.log('\n   t_s   done  exp/s(window)  exp/s(mean)  rss_MiB  heap_MiB  load');
    let prev = { t: 0, n: 0 };
    let peakRss = 0;
    while (!finished) {
      await Promise.race([all, new Promise((r) => setTimeout(r, SAMPLE_EVERY_MS))]);
      const t = (performance.now() - t0) / 1000;
      // A sample lost to an overloaded pool (its 10 s connect timeout) is reported, not fatal: the loops carry on.
      const n = await finishedCount(stack, names).catch((e: Error) => {
        console.log(`  (sample failed: ${e.message})`);
        return prev.n;
      });
      const m = process.memoryUsage();
      peakRss = Math.max(peakRss, m.rss);
      console.log(
        `${t.toFixed(0).padStart(6)} ${String(n).padStart(6)} ${((n - prev.n) / (t - prev.t)).toFixed(2).padStart(14)} ${(n / t).toFixed(2).padStart(12)} ${mib(m.rss).padStart(8)} ${mib(m.heapUsed).padStart(9)}  ${loadAverage()}`,
      );
      prev = { t, n };
    }
    const results = await all;
    const wall = (performance.now() - t0) / 1000;
    const ran = results.reduce((a, r) => a + r.experiments, 0);
    console.log(
      `\n${ran} experiments in ${wall.toFixed(0)} s: ${(ran / wall).toFixed(2)}/s; peak rss ${mib(peakRss)} MiB; stopped by ${[...new Set(results.map((r) => r.stoppedBy))].join(', ')}; load ${loadAverage()}`,
    );

    console.log('\nworkflow histories against Temporal limits (the worst of each group)');
    console.log('group                                runs   events  /51200  MiB      /50MiB  event_KiB   /2MiB');
    const loopSizes = (await Promise.all(loops.map((l) => loopRuns(stack, l.workflowId)))).flat();
    printSizes('inner loop (each continue-as-new run)', loopSizes);
    const ids = (
      await stack.db.db
        .select({ id: experiments.id })
        .from(experiments)
        .where(sql`${experiments.campaignId} IN ${names}`)
    ).map((r) => r.id);
    const step = Math.max(1, Math.floor(ids.length / EXPERIMENT_SAMPLE));
    const sample = ids.filter((_, i) => i % step === 0);
    printSizes(`experiment (${sample.length} of ${ids.length})`, await Promise.all(sample.map((id) => historySize(stack, id))));
    console.log(`  inner-loop runs per loop: ${(loopSizes.length / loops.length).toFixed(1)} (continue-as-new past 8000 events)`);

    console.log('\nPostgreSQL: the largest tables');
    const tables = await stack.db.pool.query<{ relname: string; bytes: string }>(
      `SELECT relname, pg_total_relation_size(relid) AS bytes FROM pg_stat_user_tables ORDER BY 2 DESC LIMIT 8`,
    );
    for (const t of tables.rows) {
      // Exact counts: the statistics' n_live_tup lags behind a run this short.
      const [{ n }] = (await stack.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${t.relname}"`)).rows;
      console.log(`  ${t.relname.padEnd(24)} ${String(n).padStart(9)} rows ${mib(Number(t.bytes)).padStart(8)} MiB`);
    }
    const size = await stack.db.pool.query<{ b: string }>('SELECT pg_database_size(current_database()) AS b');
    console.log(`  database ${mib(Number(size.rows[0].b))} MiB`);

    await pageTimes(stack, names[0], loops[0].workflowId, each);
  } catch (e) {
    // Said before the stack stops: a client call still retrying then dies with "Channel has been shut down".
    console.error(e);
    process.exitCode = 1;
  } finally {
    await stack.stop();
  }
}

runBench(async () => {
  await main();
  process.exit(process.exitCode ?? 0);
});
