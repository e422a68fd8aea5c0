// What launchTraining reads before it starts a trainer, in one statement (issue 38: it was four round trips): the
// experiment, its dataset version, the file of its loop's warm-start checkpoint, and its campaign's spend so far
// (what the cost cap is checked against); for runTraining, also the attempt's run if it was launched already (what
// tells a retry to reattach instead of launching), where that was a statement of its own.
import { and, eq, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import { checkpoints, costLedger, datasetVersions, experiments, innerLoops, trainingRuns } from '../db/schema';
import type { JobHandle } from '../contracts/job-handle';
import type { DatasetVersion } from './datasets/dataset-versions';
import type { Experiment } from './experiments';
import type { Queryable } from './queryable';
import type { RunStart } from './training-runs';

export interface LaunchInputs {
  exp: Experiment;
  /** Undefined when the experiment's dataset version does not exist. */
  version?: DatasetVersion;
  /**
   * The loop's warm start: null when its experiments start from scratch (or the loop is not recorded), else the
   * checkpoint's id and its file (undefined when that checkpoint or its experiment does not exist).
   */
  warmStart: { checkpointId: string; path: string | undefined } | null;
  /** The campaign's spend in USD: the sum of its ledger. */
  spent: number;
  /** With a run id: that run's handle, start and stored verdict when it was launched (what tells a retry to reattach). */
  launched?: RunStart & { handle: JobHandle };
}

const baseExperiment = alias(experiments, 'base_experiment');

/** Undefined when the experiment does not exist. `runId`: also read that run of the experiment, if it was launched. */
export async function launchInputs(q: Queryable, experimentId: string, runId?: string): Promise<LaunchInputs | undefined> {
  const [row] = await q
    .select({
      exp: experiments,
      version: datasetVersions,
      base: innerLoops.baseCheckpointId,
      basePath: checkpoints.path,
      baseExperiment: baseExperiment.id,
      spent:
        sql<number>`(SELECT coalesce(sum(${costLedger.amountUsd}), 0) FROM ${costLedger} WHERE ${costLedger.campaignId} = ${experiments.campaignId})`.mapWith(
          Number,
        ),
      run: { handle: trainingRuns.handle, startedAt: trainingRuns.startedAt, verdict: trainingRuns.verdict },
    })
    .from(experiments)
    .leftJoin(datasetVersions, eq(datasetVersions.id, experiments.datasetVersionId))
    .leftJoin(innerLoops, eq(innerLoops.id, experiments.innerLoopId))
    .leftJoin(checkpoints, eq(checkpoints.id, innerLoops.baseCheckpointId))
    .leftJoin(baseExperiment, eq(baseExperiment.id, checkpoints.experimentId))
    // No run id: a join that matches nothing (a run's id is never empty).
    .leftJoin(trainingRuns, and(eq(trainingRuns.id, runId ?? ''), eq(trainingRuns.experimentId, experiments.id)))
    .where(eq(experiments.id, experimentId));
  if (!row) return undefined;
  return {
    exp: row.exp,
    version: row.version ?? undefined,
    warmStart: row.base ? { checkpointId: row.base, path: row.baseExperiment ? (row.basePath ?? undefined) : undefined } : null,
    spent: row.spent,
    ...(row.run?.handle ? { launched: { handle: row.run.handle, startedAt: row.run.startedAt, verdict: row.run.verdict } } : {}),
  };
}
