// Same seed, same figures: three campaigns with one spec run their inner loops at the same time on the same workers
// (so their parallel runs finish in different orders), with the median pruner on: the first with an experiment
// workflow per experiment, the second with its experiments inline (coroutines of the loop's workflow,
// innerLoop.experimentWorkflows), the third with its runs served by warm trainers (trainer.warmTrain: the built-in
// trainer's `train --serve`, several runs per process, pruned ones killing theirs). Every experiment gets the same
// params, the same status, the same public score and the same pruning verdict (step and median), launched once; only
// the first and third have experiment workflows, and the third's runs share processes. The third's public splits are
// scored by the runTraining that trained them (SCORED_WITH_TRAINING): its experiments schedule no scoreCheckpoint, and
// a succeeded one's end is recorded with its score there (ENDED_WITH_SCORE): no local finishExperiment either.
import { WorkflowNotFoundError } from '@temporalio/client';
import { asc, eq, like } from 'drizzle-orm';
import { experiments, trainingRuns } from '../../db/schema';
import { saveHistory } from '../helpers/histories';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
afterAll(() => harness?.close());

test('three seeded inner loops (experiment workflows, inline, warm trainers) give identical proposals, statuses, scores and pruning verdicts', async () => {
  harness = await loopHarness('seeded-repro');
  const workers = await harness.workers('t-repro');
  const spec = (name: string, shape: 'child' | 'inline' | 'warm') =>
    fastBuiltinSpec(name, {
      ...(shape === 'warm' ? { trainer: { command: 'builtin', fixed: { logEvery: 20 }, warmTrain: true } } : {}),
      innerLoop: {
        budget: { experiments: 6, parallelism: 2 },
        batchSize: 2,
        startupTrials: 2,
        seed: 5,
        pruning: { rule: 'median', warmupSteps: 40, minCompleted: 2 },
        experimentWorkflows: shape === 'inline' ? 'inline' : 'child',
      },
    });
  const [a, b, w] = [uniqueName('repro-a'), uniqueName('repro-b'), uniqueName('repro-w')];
  const results = await Promise.all(
    (
      [
        [a, 'child'],
        [b, 'inline'],
        [w, 'warm'],
      ] as const
    ).map(async ([c, shape]) => (await workers.startLoop(c, spec(c, shape))).result()),
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
  const [ra, rb, rw] = [await rows(a), await rows(b), await rows(w)];
  expect(ra).toHaveLength(7); // six experiments and the untrained baseline
  expect(ra.some((r) => r.status === 'pruned')).toBe(true);
  expect(rb).toEqual(ra);
  expect(rw).toEqual(ra);
  for (const r of results.slice(1)) {
    expect(r.heldout).toEqual(results[0].heldout);
    expect(r.best?.params).toEqual(results[0].best?.params);
  }

  // Each training run launched once in all three; the experiments of `b` have no workflow of their own.
  const pids = new Map<string, Set<string>>();
  for (const c of [a, b, w]) {
    const runs = await harness.db.db
      .select()
      .from(trainingRuns)
      .where(like(trainingRuns.experimentId, `${c}/%`));
    expect(runs.length).toBeGreaterThanOrEqual(7);
    expect(runs.every((r) => r.launches === 1)).toBe(true);
    pids.set(c, new Set(runs.map((r) => r.handle!.ref)));
  }
  // `w`'s runs were served: fewer processes than runs (a one-shot run's pid is its own launcher's).
  expect(pids.get(a)!.size).toBeGreaterThanOrEqual(7);
  expect(pids.get(w)!.size).toBeLessThan(7);
  // A trained experiment's activities: `a`'s train, then score; `w`'s score where they train, with the same public scores.
  const activities = async (id: string) =>
    (await harness.client.workflow.getHandle(id).fetchHistory()).events!.flatMap((e) =>
      e.activityTaskScheduledEventAttributes
        ? [e.activityTaskScheduledEventAttributes.activityType!.name]
        : e.markerRecordedEventAttributes?.markerName === 'core_local_activity'
          ? ['(local)']
          : [],
    );
  const trained = ra.find((r) => r.status === 'succeeded' && r.proposer !== 'baseline')!.index;
  expect(await activities(`${a}/inner/1/e${trained}`)).toEqual(['runTraining', 'scoreCheckpoint', '(local)']);
  expect(await activities(`${w}/inner/1/e${trained}`)).toEqual(['runTraining']);
  expect(saveHistory('experiment-ended-with-score', `${w}/inner/1/e${trained}`)).toBeGreaterThan(0);
  const [ea, eb] = [`${a}/inner/1/e0`, `${b}/inner/1/e0`];
  expect((await harness.client.workflow.getHandle(ea).describe()).status.name).toBe('COMPLETED');
  await expect(harness.client.workflow.getHandle(eb).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  // The loop's own history runs them: the replay suite keeps this shape (test/histories/inner-loop-inline.json).
  expect(saveHistory('inner-loop-inline', `${b}/inner/1`)).toBeGreaterThan(0);
}, 600_000);
