// What a workflow per experiment costs Temporal, measured before anything is built on it (issue 38's "several
// experiments per workflow"): on a bare dev server (in memory, Flywheel's dynamic config), N no-op experiments,
// PARALLEL at a time, each making an experiment's calls (training and scoring activities on task queues of their own,
// a local bookkeeping activity), as a child workflow each (Flywheel's shape) and, in the same run, as coroutines of
// one parent workflow (the peer). The two alternate REPEATS times. Per experiment: wall time, CPU of this process
// (the workers and the client), CPU of the Temporal dev server, history events, and the frontend requests and the
// persistence operations the server counted (bench/lib/temporal-metrics.ts). No Flywheel code runs: the difference
// between the rows is the most that moving experiments into their batch's workflow could save.
// Run: node bin/run-ts.js bench/experiment-shape.ts [N] [PARALLEL] [REPEATS]   (defaults 200, 8, 3)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { startTemporalDevServer } from '../stack/temporal-dev-server';
import { freePort } from '../test/helpers/ports';
import type { Shape, ShapeActivities, shapeBatch } from './lib/experiment-shape-workflows';
import { countsPer, readRequestCounts, totalOf } from './lib/temporal-metrics';
import { loadAverage } from './lib/load-average';
import { TICK_MS, ticksOf } from './lib/process-cpu';
import { runBench, startedList } from './lib/run-bench';

/** utime + stime of a process, in ms. */
const cpuMs = (pid: number | 'self'): number => ticksOf(pid) * TICK_MS;

interface Figures {
  wallMs: number;
  selfMs: number;
  temporalMs: number;
  events: number;
  rpc: number;
  persist: number;
}

async function main(): Promise<void> {
  const [n, parallel, repeats] = [2, 3, 4].map((i, k) => Number(process.argv[i] ?? [200, 8, 3][k]));
  if (![n, parallel, repeats].every((x) => Number.isInteger(x) && x > 0)) {
    console.error('usage: bench/experiment-shape.ts [N] [PARALLEL] [REPEATS]: positive integers');
    process.exit(2);
  }
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const started = startedList('the experiment-shape bench');
  try {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-shape-'));
    started.add(async () => fs.rmSync(home, { recursive: true, force: true }));
    const metricsPort = await freePort();
    const server = await startTemporalDevServer({ home, port: await freePort(), dbFile: 'memory', metricsPort, readyTimeoutMs: 120_000 });
    started.add(() => server.stop());
    const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const connection = await NativeConnection.connect({ address: server.address });
    started.add(() => connection.close());
    const nothing = async () => undefined;
    const activities: ShapeActivities = { train: nothing, score: nothing, finish: nothing };
    const workers = await Promise.all([
      Worker.create({
        connection,
        taskQueue: 'shape-workflows',
        workflowsPath: require.resolve('./lib/experiment-shape-workflows'),
        activities,
      }),
      Worker.create({ connection, taskQueue: 'shape-training', activities }),
      Worker.create({ connection, taskQueue: 'shape-eval', activities }),
    ]);
    const runs = workers.map((w) => w.run());
    started.add(async () => {
      workers.forEach((w) => w.shutdown());
      await Promise.allSettled(runs);
    });
    const client = new Client({ connection: server.connection });

    const batch = async (shape: Shape, tag: string, count: number): Promise<Figures> => {
      const before = { counts: await readRequestCounts(metricsUrl), self: cpuMs('self'), temporal: cpuMs(server.pid) };
      const t0 = performance.now();
      const workflowId = `shape-${shape}-${tag}`;
      await client.workflow.execute<typeof shapeBatch>('shapeBatch', {
        taskQueue: 'shape-workflows',
        workflowId,
        args: [shape, count, parallel],
      });
      const wallMs = performance.now() - t0;
      const self = cpuMs('self') - before.self;
      const temporal = cpuMs(server.pid) - before.temporal;
      const counts = countsPer(before.counts, await readRequestCounts(metricsUrl), count);
      let events = (await client.workflow.getHandle(workflowId).fetchHistory()).events?.length ?? 0;
      if (shape === 'children')
        for (let i = 0; i < count; i++)
          events += (await client.workflow.getHandle(`${workflowId}/e${i}`).fetchHistory()).events?.length ?? 0;
      return {
        wallMs: wallMs / count,
        selfMs: self / count,
        temporalMs: temporal / count,
        events: events / count,
        rpc: totalOf(counts, 'service_requests'),
        persist: totalOf(counts, 'persistence_requests'),
      };
    };

    console.log(
      `experiment shape: ${n} no-op experiments per case, ${parallel} at a time, ${repeats} rounds alternating; ${os.cpus().length} CPUs`,
    );
    console.log(`load average at the start: ${loadAverage()}`);
    for (const shape of ['children', 'inline'] as const) await batch(shape, 'warmup', parallel * 2);
    const rows: Record<Shape, Figures[]> = { children: [], inline: [] };
    for (let r = 0; r < repeats; r++) for (const shape of ['children', 'inline'] as const) rows[shape].push(await batch(shape, `r${r}`, n));
    const label: Record<Shape, string> = {
      children: 'a child workflow per experiment',
      inline: 'peer: coroutines of one workflow',
    };
    console.log(
      `\n${'shape (per experiment)'.padEnd(42)} ${'wall ms'.padStart(8)} ${'exp/s'.padStart(7)} ${'worker CPU'.padStart(10)} ${'Temporal CPU'.padStart(12)} ${'events'.padStart(7)} ${'rpc'.padStart(6)} ${'persist'.padStart(8)}`,
    );
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    for (const shape of ['children', 'inline'] as const) {
      for (const [i, f] of rows[shape].entries())
        console.log(
          `${`${label[shape]}, round ${i + 1}`.padEnd(42)} ${f.wallMs.toFixed(1).padStart(8)} ${(1000 / f.wallMs).toFixed(1).padStart(7)} ${f.selfMs.toFixed(1).padStart(10)} ${f.temporalMs.toFixed(1).padStart(12)} ${f.events.toFixed(1).padStart(7)} ${f.rpc.toFixed(1).padStart(6)} ${f.persist.toFixed(1).padStart(8)}`,
        );
    }
    const ratio = (k: keyof Figures) => mean(rows.inline.map((f) => f[k])) / mean(rows.children.map((f) => f[k]));
    console.log(
      `\ncoroutines / children, means over the rounds: wall ${ratio('wallMs').toFixed(2)}x, worker CPU ${ratio('selfMs').toFixed(2)}x, Temporal CPU ${ratio('temporalMs').toFixed(2)}x, rpc ${ratio('rpc').toFixed(2)}x, persistence ${ratio('persist').toFixed(2)}x`,
    );
    console.log(`load average at the end: ${loadAverage()}`);
  } finally {
    await started.stop();
  }
}

runBench(main);
