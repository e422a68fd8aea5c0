// Writes streamed metric points in batches. The primary key (run, metric, step) makes a replayed
// offset (a retried activity re-reading lines it already sent) insert nothing.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { metricPoints } from '../../db/schema';
import type { MetricPoint } from './metrics-stream';

const BATCH = 2000;

export async function storeMetricPoints(db: Db, runId: string, points: MetricPoint[]): Promise<number> {
  let inserted = 0;
  for (let i = 0; i < points.length; i += BATCH) {
    const rows = points.slice(i, i + BATCH).map((p) => ({ runId, name: p.name, step: p.step, value: p.value, offset: p.offset }));
    const r = await db.insert(metricPoints).values(rows).onConflictDoNothing().returning({ step: metricPoints.step });
    inserted += r.length;
  }
  return inserted;
}

/**
 * Each finished peer run's value of `metric` at the largest step not after `step`, for runs of the same
 * inner loop other than `runId` (the median pruner's comparison set).
 */
export async function peerValuesAtStep(db: Db, innerLoopId: string, runId: string, metric: string, step: number): Promise<number[]> {
  const r = await db.execute(sql`
    SELECT DISTINCT ON (tr.id) mp.value
    FROM training_runs tr
    JOIN experiments e ON e.id = tr.experiment_id
    JOIN metric_points mp ON mp.run_id = tr.id AND mp.name = ${metric} AND mp.step <= ${step}
    WHERE e.inner_loop_id = ${innerLoopId} AND tr.status = 'succeeded' AND tr.id <> ${runId} AND e.proposer <> 'baseline'
    ORDER BY tr.id, mp.step DESC`);
  return r.rows.map((row) => Number((row as { value: number }).value));
}
