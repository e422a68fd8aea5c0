// Same seed, same figures: two campaigns with one spec run their inner loops at the same time on the same workers
// (so their parallel runs finish in different orders), with the median pruner on, the first with an experiment
// workflow per experiment and the second with its experiments inline (coroutines of the loop's workflow,
// innerLoop.experimentWorkflows). Every experiment gets the same params, the same status, the same public score and
// the same pruning verdict (step and median), launched once; only the first has experiment workflows.
import { WorkflowNotFoundError } from '@temporalio/client';
import { asc, eq, like } from 'drizzle-orm';
import { experiments, trainingRuns } from '../../db/schema';
import { saveHistory } from '../helpers/histories';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
afterAll(() => harness?.close());

test('two seeded inner loops, one with experiment workflows and one inline, give identical proposals, statuses, scores and pruning verdicts', async () => {
  harness = await loopHarness('seeded-repro');
  const workers = await harness.workers('t-repro');
  const spec = (name: string, experimentWorkflows: 'child' | 'inline') =>
    fastBuiltinSpec(name, {
      innerLoop: {
        budget: { experiments: 6, parallelism: 2 },
        batchSize: 2,
        startupTrials: 2,
        seed: 5,
        pruning: { rule: 'median', warmupSteps: 40, minCompleted: 2 },
        experimentWorkflows,
      },
    });
  const [a, b] = [uniqueName('repro-a'), uniqueName('repro-b')];
  const results = await Promise.all(
    [
      [a, 'child'],
      [b, 'inline'],
    ].map(async ([c, shape]) => (await workers.startLoop(c, spec(c, shape as 'child' | 'inline'))).result()),
  );
  const rows = async (c: string) =>
    (await harness.db.db.select().from(experiments).where(eq(experiments.campaignId, c)).orderBy(asc(experiments.index))).map((r) => ({
      index: r.index,
      proposer: r.proposer,
      params: r.params,
      status: r.status,
      publicScore: r.publicScore,
      error: r.error,
    }));
  const [ra, rb] = [await rows(a), await rows(b)];
  expect(ra).toHaveLength(7); // six experiments and the untrained baseline
  expect(rb).toEqual(ra);
  expect(results[1].heldout).toEqual(results[0].heldout);
  expect(results[1].best?.params).toEqual(results[0].best?.params);

  // Each training run launched once in both; the experiments of `b` have no workflow of their own.
  for (const c of [a, b]) {
    const runs = await harness.db.db
      .select()
      .from(trainingRuns)
      .where(like(trainingRuns.experimentId, `${c}/%`));
    expect(runs.length).toBeGreaterThanOrEqual(7);
    expect(runs.every((r) => r.launches === 1)).toBe(true);
  }
  const [ea, eb] = [`${a}/inner/1/e0`, `${b}/inner/1/e0`];
  expect((await harness.client.workflow.getHandle(ea).describe()).status.name).toBe('COMPLETED');
  await expect(harness.client.workflow.getHandle(eb).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  // The loop's own history runs them: the replay suite keeps this shape (test/histories/inner-loop-inline.json).
  expect(saveHistory('inner-loop-inline', `${b}/inner/1`)).toBeGreaterThan(0);
}, 600_000);
