// Writes streamed metric points in batches. The primary key (run, metric, step) makes a replayed
// offset (a retried activity re-reading lines it already sent) insert nothing.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { metricPoints } from '../../db/schema';
import type { PeerCurve } from '../../core/pruning';
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
 * The median pruner's comparison set for `runId`: the curves of `metric` of the succeeded runs of the same inner
 * loop whose experiments were proposed in an earlier batch (created before this one's; a batch's rows are inserted
 * in one statement, so they share a creation time). Earlier batches have all ended before a batch starts, so the
 * set does not depend on which of the batch's parallel runs finishes first.
 */
export async function peerCurves(db: Db, innerLoopId: string, runId: string, metric: string): Promise<PeerCurve[]> {
  const r = await db.execute(sql`
    SELECT tr.id AS run, mp.step, mp.value
    FROM training_runs tr
    JOIN experiments e ON e.id = tr.experiment_id
    JOIN metric_points mp ON mp.run_id = tr.id AND mp.name = ${metric}
    WHERE e.inner_loop_id = ${innerLoopId} AND tr.status = 'succeeded' AND e.proposer <> 'baseline'
      AND e.created_at < (SELECT e2.created_at FROM training_runs tr2 JOIN experiments e2 ON e2.id = tr2.experiment_id WHERE tr2.id = ${runId})
    ORDER BY tr.id, mp.step`);
  const byRun = new Map<string, [number, number][]>();
  for (const row of r.rows as { run: string; step: number; value: number }[]) {
    const c = byRun.get(row.run) ?? [];
    c.push([Number(row.step), Number(row.value)]);
    byRun.set(row.run, c);
  }
  return [...byRun.values()];
}
