// A training run's streamed metric points (metrics.jsonl, read by awaitTraining) and the curves the median pruner
// compares a run with. The primary key (run, metric, step) makes a replayed offset (a retried activity re-reading
// lines it already sent) insert nothing.
import { and, asc, eq, lt, ne } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { PeerCurve } from '../core/pruning';
import { experiments, metricPoints, trainingRuns } from '../db/schema';
import type { Queryable } from './queryable';
import { BASELINE_PROPOSER } from '../contracts/experiment';

/** One metric line as read from metrics.jsonl: the byte offset makes a replay recognisable. */
export interface StoredMetricPoint {
  name: string;
  step: number;
  value: number;
  offset: number;
}

const BATCH = 2000;

/** Stores the points in batches, skipping those stored already; returns how many were new. */
export async function storeMetricPoints(q: Queryable, runId: string, points: readonly StoredMetricPoint[]): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < points.length; i += BATCH) {
    const rows = points.slice(i, i + BATCH).map((p) => ({ runId, name: p.name, step: p.step, value: p.value, offset: p.offset }));
    const r = await q.insert(metricPoints).values(rows).onConflictDoNothing().returning({ step: metricPoints.step });
    inserted += r.length;
  }
  return inserted;
}

/**
 * The median pruner's comparison set for `runId`: the curves of `metric` of the succeeded runs of the same inner
 * loop whose experiments were proposed in an earlier batch (created before this one's; a batch's rows are inserted
 * in one statement, so they share a creation time). Earlier batches have all ended before a batch starts, so the
 * set does not depend on which of the batch's parallel runs finishes first.
 */
export async function peerCurves(q: Queryable, innerLoopId: string, runId: string, metric: string): Promise<PeerCurve[]> {
  const ownRun = alias(trainingRuns, 'own_run');
  const ownExperiment = alias(experiments, 'own_experiment');
  const batchCreatedAt = q
    .select({ createdAt: ownExperiment.createdAt })
    .from(ownRun)
    .innerJoin(ownExperiment, eq(ownExperiment.id, ownRun.experimentId))
    .where(eq(ownRun.id, runId));
  const rows = await q
    .select({ run: trainingRuns.id, step: metricPoints.step, value: metricPoints.value })
    .from(trainingRuns)
    .innerJoin(experiments, eq(experiments.id, trainingRuns.experimentId))
    .innerJoin(metricPoints, and(eq(metricPoints.runId, trainingRuns.id), eq(metricPoints.name, metric)))
    .where(
      and(
        eq(experiments.innerLoopId, innerLoopId),
        eq(trainingRuns.status, 'succeeded'),
        ne(experiments.proposer, BASELINE_PROPOSER),
        lt(experiments.createdAt, batchCreatedAt),
      ),
    )
    .orderBy(asc(trainingRuns.id), asc(metricPoints.step));
  const byRun = new Map<string, [number, number][]>();
  for (const row of rows) {
    const c = byRun.get(row.run) ?? [];
    c.push([row.step, row.value]);
    byRun.set(row.run, c);
  }
  return [...byRun.values()];
}
