// What a loop's progress view reads from PostgreSQL: its running experiments with their latest logged loss, and its
// experiments counted by outcome with the mean duration of those that succeeded (the untrained baseline not counted).
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { experiments } from '../../db/schema';

export interface RunningExperimentRow {
  id: string;
  params: Record<string, unknown>;
  startedAt: Date | null;
  /** The latest logged loss point of its latest run, if any. */
  latest?: { step: number; loss: number };
}

export async function runningExperimentRows(db: Db, experimentIds: string[]): Promise<RunningExperimentRow[]> {
  if (experimentIds.length === 0) return [];
  const rows = await db
    .select({ id: experiments.id, params: experiments.params, startedAt: experiments.startedAt })
    .from(experiments)
    .where(inArray(experiments.id, experimentIds));
  const latest = await db.execute(sql`
    SELECT DISTINCT ON (tr.experiment_id) tr.experiment_id AS id, mp.step, mp.value
    FROM training_runs tr JOIN metric_points mp ON mp.run_id = tr.id AND mp.name = 'loss'
    WHERE tr.experiment_id IN (${sql.join(
      experimentIds.map((id) => sql`${id}`),
      sql`, `,
    )})
    ORDER BY tr.experiment_id, tr.attempt DESC, mp.step DESC`);
  const byId = new Map(latest.rows.map((r) => [String(r.id), { step: Number(r.step), loss: Number(r.value) }]));
  return rows.map((r) => ({ id: r.id, params: r.params as Record<string, unknown>, startedAt: r.startedAt, latest: byId.get(r.id) }));
}

export interface ExperimentCountRow {
  status: string;
  n: number;
  /** Mean seconds of the succeeded ones (null for other statuses). */
  secs: number | null;
}

export async function experimentCountsOf(db: Db, innerLoopId: string): Promise<ExperimentCountRow[]> {
  const r = await db.execute(sql`
    SELECT status, count(*)::int AS n,
           avg(extract(epoch FROM finished_at - started_at)) FILTER (WHERE status = 'succeeded') AS secs
    FROM experiments WHERE inner_loop_id = ${innerLoopId} AND proposer <> 'baseline' GROUP BY status`);
  return r.rows as unknown as ExperimentCountRow[];
}
