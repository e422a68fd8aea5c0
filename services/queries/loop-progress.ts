// What a loop's progress view reads from PostgreSQL: its running experiments with their latest logged loss, and its
// experiments counted by outcome with the mean duration of those that succeeded (the untrained baseline not counted).
import { and, count, desc, eq, inArray, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { experiments, metricPoints, trainingRuns } from '../../db/schema';
import { BASELINE_PROPOSER } from '../../contracts/experiment';

export interface RunningExperimentRow {
  id: string;
  params: Record<string, unknown>;
  startedAt: Date | null;
  /** The latest logged loss point of its latest run, if any. */
  latest?: { step: number; loss: number };
}

export async function runningExperimentRows(db: Db, experimentIds: string[]): Promise<RunningExperimentRow[]> {
  if (experimentIds.length === 0) return [];
  const [rows, latest] = await Promise.all([
    db
      .select({ id: experiments.id, params: experiments.params, startedAt: experiments.startedAt })
      .from(experiments)
      .where(inArray(experiments.id, experimentIds)),
    // One row per experiment: the last loss point of its last attempt.
    db
      .selectDistinctOn([trainingRuns.experimentId], { id: trainingRuns.experimentId, step: metricPoints.step, loss: metricPoints.value })
      .from(trainingRuns)
      .innerJoin(metricPoints, and(eq(metricPoints.runId, trainingRuns.id), eq(metricPoints.name, 'loss')))
      .where(inArray(trainingRuns.experimentId, experimentIds))
      .orderBy(trainingRuns.experimentId, desc(trainingRuns.attempt), desc(metricPoints.step)),
  ]);
  const byId = new Map(latest.map((r) => [r.id, { step: r.step, loss: r.loss }]));
  return rows.map((r) => ({ id: r.id, params: r.params, startedAt: r.startedAt, latest: byId.get(r.id) }));
}

export type ExperimentCountRow = Awaited<ReturnType<typeof experimentCountsOf>>[number];

export const experimentCountsOf = (db: Db, innerLoopId: string) =>
  db
    .select({
      status: experiments.status,
      n: count(),
      /** Mean seconds of the succeeded ones (null for other statuses). */
      secs: sql<
        number | null
      >`avg(extract(epoch FROM ${experiments.finishedAt} - ${experiments.startedAt})) FILTER (WHERE ${experiments.status} = 'succeeded')`.mapWith(
        Number,
      ),
    })
    .from(experiments)
    .where(and(eq(experiments.innerLoopId, innerLoopId), ne(experiments.proposer, BASELINE_PROPOSER)))
    .groupBy(experiments.status);
