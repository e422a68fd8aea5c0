// Orchestration overhead per experiment: the wall time of an `experiment` child workflow (launch, await,
// public scoring, bookkeeping) minus the trainer's own run time, for a trainer that does nothing and one that
// runs 1 s; median and p95 over N experiments, 8 at a time. Target: median < 150 ms, < 2% of a 10 s run.
// Run: node bin/run-ts.js bench/orchestration-overhead.ts [N] [PARALLEL]   (defaults 50 and 8)
import { like } from 'drizzle-orm';
import { experiments, trainingRuns } from '../db/schema';
import { fixtureSpec } from '../test/helpers/specs';
import { quantile, startBenchStack } from './lib/bench-stack';
import { timelineOf } from './lib/history-timeline';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 50);
  const parallel = Number(process.argv[3] ?? 8);
  const stack = await startBenchStack();
  try {
    console.log(`orchestration overhead: ${n} experiments per case, ${parallel} at a time (2-core machine)`);
    console.log('case            median_ms   p95_ms   trainer_s   overhead/10s-run');
    const breakdowns: Array<[string, Record<string, number[]>]> = [];
    for (const [label, sleepMs] of [
      ['no-op trainer', 0],
      ['1 s trainer', 1000],
    ] as const) {
      const name = `bench-${sleepMs}`;
      const wf = `${name}/inner/1`;
      const h = await stack.client.workflow.start('innerLoop', {
        taskQueue: `${stack.prefix}-orchestration`,
        workflowId: wf,
        args: [
          {
            campaignVersionId: (
              await registerCampaignVersion(
                stack.db.db,
                fixtureSpec(
                  name,
                  { steps: 1, sleepMs },
                  { budget: { experiments: n, parallelism: parallel }, batchSize: Math.max(parallel, 4), plateau: { patience: 1000 } },
                ),
              )
            ).versionId,
          },
        ],
      });
      await h.result();
      const overheads: number[] = [];
      const parts: Record<string, number[]> = {};
      const trainer: number[] = [];
      const rows = await stack.db.db
        .select()
        .from(experiments)
        .where(like(experiments.id, `${wf}/e%`));
      const runs = new Map(
        (
          await stack.db.db
            .select()
            .from(trainingRuns)
            .where(like(trainingRuns.experimentId, `${wf}/e%`))
        ).map((r) => [r.experimentId, r]),
      );
      for (const r of rows) {
        const d = await stack.client.workflow.getHandle(r.id).describe();
        const wall = (d.closeTime!.getTime() - d.startTime.getTime()) / 1000;
        const t = runs.get(r.id)?.trainerSeconds ?? 0;
        const history = await stack.client.workflow.getHandle(r.id).fetchHistory();
        const tl = timelineOf(history.events ?? []);
        tl.parts['awaitTraining.running'] = (tl.parts['awaitTraining.running'] ?? 0) - t * 1000;
        for (const [k, v] of Object.entries(tl.parts)) (parts[k] ??= []).push(v);
        trainer.push(t);
        overheads.push((wall - t) * 1000);
      }
      const med = quantile(overheads, 0.5);
      console.log(
        `${label.padEnd(15)} ${med.toFixed(0).padStart(9)} ${quantile(overheads, 0.95).toFixed(0).padStart(8)} ${quantile(trainer, 0.5).toFixed(3).padStart(11)}   ${((med / 10_000) * 100).toFixed(2)}%`,
      );
      breakdowns.push([label, parts]);
    }
    for (const [label, parts] of breakdowns) {
      console.log(`\nwhere the overhead goes, ${label} (median ms per experiment; awaitTraining.running excludes the trainer):`);
      for (const [k, v] of Object.entries(parts)) console.log(`  ${k.padEnd(30)} ${quantile(v, 0.5).toFixed(0).padStart(6)}`);
    }
  } finally {
    await stack.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
