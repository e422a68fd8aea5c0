// One experiment: its row, its training attempts and its eval results.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { evalResults, experiments, trainingRuns } from '../../db/schema';
import { durationSeconds, proposalColumns } from './leaderboard';

export type ExperimentRow = NonNullable<Awaited<ReturnType<typeof getExperiment>>>;

export const getExperiment = async (db: Db, id: string) =>
  (
    await db
      .select({
        id: experiments.id,
        campaign_id: experiments.campaignId,
        inner_loop_id: experiments.innerLoopId,
        dataset_version_id: experiments.datasetVersionId,
        ...proposalColumns,
        best_checkpoint_id: experiments.bestCheckpointId,
        error: experiments.error,
        started_at: experiments.startedAt,
        finished_at: experiments.finishedAt,
        capacity_wait_s: experiments.capacityWaitSeconds,
        duration_s: durationSeconds,
      })
      .from(experiments)
      .where(eq(experiments.id, id))
  )[0];

export type RunRow = Awaited<ReturnType<typeof runsOf>>[number];

export const runsOf = (db: Db, experimentId: string) =>
  db
    .select({
      id: trainingRuns.id,
      attempt: trainingRuns.attempt,
      backend: trainingRuns.backend,
      status: trainingRuns.status,
      exit_code: trainingRuns.exitCode,
      trainer_seconds: trainingRuns.trainerSeconds,
      capacity_wait_seconds: trainingRuns.capacityWaitSeconds,
      stderr_tail: trainingRuns.stderrTail,
      started_at: trainingRuns.startedAt,
      ended_at: trainingRuns.endedAt,
    })
    .from(trainingRuns)
    .where(eq(trainingRuns.experimentId, experimentId))
    .orderBy(trainingRuns.attempt);

export type EvalRow = Awaited<ReturnType<typeof evalsOf>>[number];

export const evalsOf = (db: Db, experimentId: string) =>
  db
    .select({
      suite_id: evalResults.suiteId,
      split: evalResults.split,
      checkpoint_id: evalResults.checkpointId,
      item_count: evalResults.itemCount,
      metrics: evalResults.metrics,
    })
    .from(evalResults)
    .where(eq(evalResults.experimentId, experimentId))
    .orderBy(evalResults.suiteId, evalResults.split);
