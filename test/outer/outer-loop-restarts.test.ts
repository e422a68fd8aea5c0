// An outer iteration whose workers are shut down and replaced in every step it is seen in
// (claim, critiques, dataset, inner loop, gate, record): it still completes, and nothing is written twice.
import { eq, sql } from 'drizzle-orm';
import { storeFeedback } from '../../services/feedback-store';
import { campaigns, critiques, datasetVersions, decisions, examples, experiments, outerIterations, trainingRuns } from '../../db/schema';
import { outerStatusQuery, type OuterLoopResult } from '../../contracts/outer-loop';
import { freshDatabase, scratchDir, temporalClient } from '../helpers/env';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';
import { startTestWorkers, type TestWorkers } from '../helpers/workers';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';

test('worker restarts at every step of an outer iteration: one iteration, one dataset version, one decision, one launch per run', async () => {
  const { handle: db } = await freshDatabase('outer_restarts');
  const { client, connection } = await temporalClient();
  const home = scratchDir('outer-restarts');
  const prefix = uniqueName('t-restarts');
  const name = uniqueName('restarts');
  const spec = fastBuiltinSpec(name, {
    innerLoop: { budget: { experiments: 2, parallelism: 2 } },
    outerLoop: { innerBudget: { experiments: 2 } },
  });
  let workers: TestWorkers = await startTestWorkers({ prefix, db: db.db, home });
  try {
    const { versionId: campaignVersionId } = await registerCampaignVersion(db.db, spec);
    const ev = (i: number) => ({
      id: `${name}-e${i}`,
      campaignId: name,
      kind: 'edit' as const,
      modelVersion: 'v0',
      prompt: `const total${i} = items.reduce((a, b) => `,
      output: 'a',
      correction: `a + b.price * ${i}, 0);\n`,
    });
    await storeFeedback(db.db, [1, 2, 3, 4, 5].map(ev));

    const handle = await client.workflow.start('outerLoop', {
      taskQueue: `${prefix}-orchestration`,
      workflowId: `${name}/outer/chaos`,
      args: [{ campaignId: name, campaignVersionId, trigger: 'cli' }],
    });
    // Replace the workers once in every phase the iteration is seen in (claim, critiques, dataset, inner loop, gate…).
    let finished = false;
    void handle.result().then(
      () => (finished = true),
      () => (finished = true),
    );
    const restartedIn: string[] = [];
    while (!finished) {
      const phase = (await handle.query(outerStatusQuery).catch(() => undefined))?.phase;
      if (phase && phase !== 'done' && !restartedIn.includes(phase) && !finished) {
        await workers.stop();
        workers = await startTestWorkers({ prefix, db: db.db, home });
        restartedIn.push(phase);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = (await handle.result()) as OuterLoopResult;
    const it = r.iterations[0];
    expect(restartedIn).toContain('inner-loop');
    expect(restartedIn.length).toBeGreaterThanOrEqual(3);
    expect(it).toMatchObject({ iteration: 1, status: 'promoted', newFeedback: 5 });

    const n = async (q: Promise<{ n: number }[]>) => (await q)[0].n;
    const total = sql<number>`count(*)::int`;
    expect(await n(db.db.select({ n: total }).from(outerIterations).where(eq(outerIterations.campaignId, name)))).toBe(1);
    // The base version and the iteration's own.
    expect(await n(db.db.select({ n: total }).from(datasetVersions))).toBe(2);
    expect(await n(db.db.select({ n: total }).from(critiques).where(eq(critiques.outerIterationId, it.outerIterationId)))).toBe(5);
    expect(
      await n(
        db.db
          .select({ n: total })
          .from(examples)
          .where(sql`${examples.datasetVersionId} = ${it.datasetVersionId} and ${examples.source} = 'critique'`),
      ),
    ).toBe(5);
    const decided = await db.db.select().from(decisions).where(eq(decisions.campaignId, name));
    expect(decided.map((d) => d.id).sort()).toEqual([`${it.innerLoopId}/select`, `${it.outerIterationId}/gate`].sort());
    const runs = await db.db
      .select()
      .from(trainingRuns)
      .innerJoin(experiments, eq(experiments.id, trainingRuns.experimentId))
      .where(eq(experiments.innerLoopId, it.innerLoopId!));
    expect(runs.length).toBe(3);
    expect(runs.every((x) => x.training_runs.launches === 1 && x.training_runs.status === 'succeeded')).toBe(true);
    const [c] = await db.db.select().from(campaigns).where(eq(campaigns.id, name));
    expect(c.productionCheckpointId).toBe(it.candidateCheckpointId);
  } finally {
    await workers.stop();
    await connection.close();
    await db.close();
  }
}, 420_000);
