// Reads what a running inner loop looks like right now: the workflow's status and leaderboard queries,
// plus each running experiment's latest step from PostgreSQL (the metrics never pass through Temporal).
import type { WorkflowHandle } from '@temporalio/client';
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { experiments } from '../db/schema';
import { leaderboardQuery, statusQuery, type InnerLoopStatus, type LeaderEntry } from '../workflows/inner-loop-api';

export interface RunningExperiment {
  experimentId: string;
  step: number;
  totalSteps: number;
  loss?: number;
}

export interface LoopSnapshot {
  status: InnerLoopStatus;
  leaderboard: LeaderEntry[];
  running: RunningExperiment[];
}

/** @param defaultSteps the run length when an experiment's params do not set `steps` (the trainer's default). */
export async function snapshot(handle: WorkflowHandle, db: Db, defaultSteps = 0): Promise<LoopSnapshot> {
  const [status, leaderboard] = await Promise.all([handle.query(statusQuery), handle.query(leaderboardQuery)]);
  const running: RunningExperiment[] = [];
  if (status.running.length > 0) {
    const rows = await db.select({ id: experiments.id, params: experiments.params }).from(experiments).where(inArray(experiments.id, status.running));
    const latest = await db.execute(sql`
      SELECT DISTINCT ON (tr.experiment_id) tr.experiment_id AS id, mp.step, mp.value
      FROM training_runs tr JOIN metric_points mp ON mp.run_id = tr.id AND mp.name = 'loss'
      WHERE tr.experiment_id IN (${sql.join(status.running.map((id) => sql`${id}`), sql`, `)})
      ORDER BY tr.experiment_id, tr.attempt DESC, mp.step DESC`);
    const byId = new Map(latest.rows.map((r) => [String(r.id), r as { step: number; value: number }]));
    for (const r of rows) {
      const p = byId.get(r.id);
      running.push({ experimentId: r.id, step: p ? Number(p.step) : 0, totalSteps: Number((r.params as Record<string, unknown>).steps ?? defaultSteps), loss: p ? Number(p.value) : undefined });
    }
  }
  return { status, leaderboard, running };
}
