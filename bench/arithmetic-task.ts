// The arithmetic task (tasks/arithmetic) through the user's path on a throwaway stack: its files registered with
// `flywheel dataset add` and `flywheel suite add` (child processes, as a user types them), one inner loop, then N
// outer iterations with the task's simulated users. Prints the held-out pass rate, overall and per category, of the
// untrained baseline, of the inner loop's best checkpoint, and of the production model after each outer iteration.
// Run: node bin/run-ts.js bench/arithmetic-task.ts [OUTER_ITERATIONS] [SEED] [USER_EVENTS]   (defaults 3, 1, 150)
import fs from 'node:fs';
import os from 'node:os';
import { parse } from 'yaml';
import { startBenchStack } from './lib/bench-stack';
import { addArithmeticTask, benchSession } from './lib/arithmetic-task-files';
import { arithmeticUsers } from '../tasks/arithmetic/simulated-users';
import { exampleTask } from '../services/example-tasks';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { startInnerLoopWorkflow } from '../services/campaign-loops';
import { heldoutMetricsOf } from '../services/queries/heldout-metrics';
import { productionCheckpointOf } from '../services/production-model';
import type { InnerLoopResult } from '../contracts/inner-loop';
import { runOuterDemo } from '../cli/outer-demo';
import { pickMetrics } from '../cli/task-demo';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';

async function main(): Promise<void> {
  const [iterations, seed, events] = [3, 1, 150].map((d, i) => Number(process.argv[2 + i] ?? d));
  const t0 = Date.now();
  const since = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
  const stack = await startBenchStack(55493);
  try {
    console.log(`arithmetic task, seed ${seed}: ${os.cpus().length} cores, load ${loadAverage()}`);
    const env = addArithmeticTask(stack, seed, (l) => console.log(l));
    const raw = parse(fs.readFileSync(exampleTask('arithmetic').spec, 'utf8')) as { innerLoop: { seed: number } };
    raw.innerLoop.seed = seed;
    const { versionId, spec } = await registerCampaignVersion(stack.db.db, raw);
    const inner = (await (
      await startInnerLoopWorkflow(stack.client, { taskQueuePrefix: stack.prefix }, versionId)
    ).result()) as InnerLoopResult;
    const columns: [string, Record<string, number> | undefined][] = [
      ['untrained', inner.baselineCheckpointId ? await heldoutMetricsOf(stack.db.db, inner.baselineCheckpointId) : undefined],
      ['inner loop', inner.best ? await heldoutMetricsOf(stack.db.db, inner.best.checkpointId) : undefined],
    ];
    console.log(`inner loop: ${inner.experiments} experiments, stopped by ${inner.stoppedBy} (${since()})`);

    const session = benchSession(stack, env);
    for (let i = 1; i <= iterations; i++) {
      await runOuterDemo(session, spec, versionId, { iterations: 1, events, seed, json: false, users: arithmeticUsers(seed) });
      const production = await productionCheckpointOf(stack.db.db, spec.name);
      columns.push([`outer ${i}`, production ? await heldoutMetricsOf(stack.db.db, production) : undefined]);
      console.log(`outer iteration ${i} done (${since()})`);
    }

    console.log(`\nheld-out pass rate (${spec.name}, ${since()} in all):`);
    console.log(`  ${'metric'.padEnd(20)} ${columns.map(([c]) => c.padStart(11)).join('')}`);
    for (const m of pickMetrics(...columns.map(([, r]) => r)))
      console.log(`  ${m.padEnd(20)} ${columns.map(([, r]) => (r?.[m] === undefined ? '-' : r[m].toFixed(3)).padStart(11)).join('')}`);
  } finally {
    await stack.stop();
  }
}

runBench(main);
