// Dispatch latency on the dev server: N workflows one after another, each making two activity calls on task queues
// of their own (as an experiment calls `runTraining` on `training` and `scoreCheckpoint` on `eval`), on a dev server
// with Flywheel's dynamic configuration (DEFAULT_DYNAMIC_CONFIG) and, in the same run, its peer: the same server with
// the server's defaults. Prints, per server, the median and p95 of an activity's dispatch (scheduled → started), of
// a workflow task's (scheduled → started) and of each workflow's wall time, in ms.
// Run: node bin/run-ts.js bench/dispatch-latency.ts [N] [SLEEP_MS]   (defaults 40 and 30: each activity sleeps that long)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { DEFAULT_DYNAMIC_CONFIG, startTemporalDevServer } from '../stack/temporal-dev-server';
import { freePort } from '../test/helpers/ports';
import { quantile } from './lib/bench-stack';
import { activitySpans, ms } from './lib/history-timeline';
import type { RoundTripActivities, RoundTripCall, roundTrips } from './lib/round-trip-workflow';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';

const WARMUP = 3;

interface Figures {
  activity: number[];
  workflowTask: number[];
  wall: number[];
}

async function measure(dynamicConfig: Record<string, string | number>, n: number, sleepMs: number): Promise<Figures> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-dispatch-'));
  const server = await startTemporalDevServer({ home, port: await freePort(), dbFile: 'memory', dynamicConfig, readyTimeoutMs: 120_000 });
  const connection = await NativeConnection.connect({ address: server.address });
  const activities: RoundTripActivities = { pause: (t) => new Promise((resolve) => setTimeout(resolve, t)) };
  const workers = await Promise.all([
    Worker.create({ connection, taskQueue: 'workflows', workflowsPath: require.resolve('./lib/round-trip-workflow'), activities }),
    Worker.create({ connection, taskQueue: 'training', activities }),
    Worker.create({ connection, taskQueue: 'eval', activities }),
  ]);
  const runs = workers.map((w) => w.run());
  const client = new Client({ connection: server.connection });
  const calls: RoundTripCall[] = [
    { taskQueue: 'training', sleepMs },
    { taskQueue: 'eval', sleepMs },
  ];
  const figures: Figures = { activity: [], workflowTask: [], wall: [] };
  try {
    for (let i = 0; i < WARMUP + n; i++) {
      const handle = await client.workflow.start<typeof roundTrips>('roundTrips', {
        taskQueue: 'workflows',
        workflowId: `dispatch-${i}`,
        args: [calls],
      });
      await handle.result();
      if (i < WARMUP) continue;
      const events = (await handle.fetchHistory()).events ?? [];
      for (const s of activitySpans(events)) figures.activity.push(s.startedMs! - s.scheduledMs);
      const scheduled = new Map<number, number>();
      for (const e of events) {
        if (e.workflowTaskScheduledEventAttributes) scheduled.set(Number(e.eventId), ms(e));
        const st = e.workflowTaskStartedEventAttributes;
        if (st) figures.workflowTask.push(ms(e) - scheduled.get(Number(st.scheduledEventId))!);
      }
      figures.wall.push(ms(events[events.length - 1]) - ms(events[0]));
    }
  } finally {
    workers.forEach((w) => w.shutdown());
    await Promise.allSettled(runs);
    await connection.close();
    await server.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
  return figures;
}

const fmt = (xs: number[]) => `${quantile(xs, 0.5).toFixed(0).padStart(6)} ${quantile(xs, 0.95).toFixed(0).padStart(6)}`;

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 40);
  const sleepMs = Number(process.argv[3] ?? 30);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  console.log(`dispatch latency: ${n} workflows one after another, 2 activities each on other task queues, sleeping ${sleepMs} ms; ms`);
  console.log(`load average at the start: ${loadAverage()}`);
  const cases: [string, Record<string, string | number>][] = [
    [
      `Flywheel's (${Object.entries(DEFAULT_DYNAMIC_CONFIG)
        .map(([k, v]) => `${k}=${v}`)
        .join(', ')})`,
      DEFAULT_DYNAMIC_CONFIG,
    ],
    ['peer: the server defaults', {}],
  ];
  const results: Figures[] = [];
  for (const [, config] of cases) results.push(await measure(config, n, sleepMs));
  console.log(
    `\n${'server configuration'.padEnd(72)} ${'activity med p95'.padStart(16)} ${'wf task med p95'.padStart(16)} ${'wall med p95'.padStart(14)}`,
  );
  cases.forEach(([label], i) =>
    console.log(`${label.padEnd(72)}   ${fmt(results[i].activity)}   ${fmt(results[i].workflowTask)} ${fmt(results[i].wall)}`),
  );
  const ratio = quantile(results[1].wall, 0.5) / quantile(results[0].wall, 0.5);
  console.log(`\nwall time per workflow, peer / Flywheel's: ${ratio.toFixed(2)}x; load average at the end: ${loadAverage()}`);
}

runBench(main);
