// Reads what a running inner loop looks like right now: the workflow's status and leaderboard queries,
// plus each running experiment's latest step from PostgreSQL (the metrics never pass through Temporal).
import type { WorkflowHandle } from '@temporalio/client';
import { inArray, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { experiments } from '../db/schema';
import { leaderboardQuery, statusQuery, type InnerLoopStatus, type LeaderEntry } from '../contracts/inner-loop';

export interface RunningExperiment {
  experimentId: string;
  step: number;
  totalSteps: number;
  loss?: number;
  /** Seconds since the experiment started. */
  elapsedSeconds?: number;
}

/** The loop's experiments by outcome (the untrained baseline not counted): results, not launches. */
export interface LoopCounts {
  /** Ended, whatever the outcome; `byStatus` breaks it down (succeeded, pruned, failed, …). */
  done: number;
  byStatus: Record<string, number>;
  running: number;
  /** Proposed or not yet proposed, within the budget. */
  queued: number;
  budget: number;
  /** Mean wall time of the loop's ended experiments that ran to the end, in seconds. */
  meanSeconds?: number;
}

export interface LoopSnapshot {
  status: InnerLoopStatus;
  leaderboard: LeaderEntry[];
  running: RunningExperiment[];
  counts: LoopCounts;
  /** Seconds until the budget is spent at today's pace; undefined until one experiment has ended. */
  etaSeconds?: number;
}

const ENDED = ['succeeded', 'pruned', 'failed', 'timed_out', 'cancelled', 'rejected'];

/** @param defaultSteps the run length when an experiment's params do not set `steps` (the trainer's default). */
export async function snapshot(handle: WorkflowHandle, db: Db, defaultSteps = 0): Promise<LoopSnapshot> {
  const [status, leaderboard] = await Promise.all([handle.query(statusQuery), handle.query(leaderboardQuery)]);
  const running: RunningExperiment[] = [];
  const now = Date.now();
  if (status.running.length > 0) {
    const rows = await db.select({ id: experiments.id, params: experiments.params, startedAt: experiments.startedAt }).from(experiments).where(inArray(experiments.id, status.running));
    const latest = await db.execute(sql`
      SELECT DISTINCT ON (tr.experiment_id) tr.experiment_id AS id, mp.step, mp.value
      FROM training_runs tr JOIN metric_points mp ON mp.run_id = tr.id AND mp.name = 'loss'
      WHERE tr.experiment_id IN (${sql.join(status.running.map((id) => sql`${id}`), sql`, `)})
      ORDER BY tr.experiment_id, tr.attempt DESC, mp.step DESC`);
    const byId = new Map(latest.rows.map((r) => [String(r.id), r as { step: number; value: number }]));
    for (const r of rows) {
      const p = byId.get(r.id);
      const elapsedSeconds = r.startedAt ? Math.max(0, (now - r.startedAt.getTime()) / 1000) : undefined;
      running.push({ experimentId: r.id, step: p ? Number(p.step) : 0, totalSteps: Number((r.params as Record<string, unknown>).steps ?? defaultSteps), loss: p ? Number(p.value) : undefined, elapsedSeconds });
    }
  }
  const counts = await loopCounts(db, handle.workflowId, status);
  return { status, leaderboard, running, counts, etaSeconds: eta(counts, running, status.parallelism) };
}

async function loopCounts(db: Db, innerLoopId: string, status: InnerLoopStatus): Promise<LoopCounts> {
  const r = await db.execute(sql`
    SELECT status, count(*)::int AS n,
           avg(extract(epoch FROM finished_at - started_at)) FILTER (WHERE status = 'succeeded') AS secs
    FROM experiments WHERE inner_loop_id = ${innerLoopId} AND proposer <> 'baseline' GROUP BY status`);
  const byStatus: Record<string, number> = {};
  let meanSeconds: number | undefined;
  for (const row of r.rows as { status: string; n: number; secs: number | null }[]) {
    if (ENDED.includes(row.status)) byStatus[row.status] = Number(row.n);
    if (row.secs !== null && row.secs !== undefined) meanSeconds = Number(row.secs);
  }
  const done = Object.values(byStatus).reduce((a, b) => a + b, 0);
  const running = status.running.length;
  return { done, byStatus, running, queued: Math.max(0, status.budget - done - running), budget: status.budget, meanSeconds };
}

/**
 * The budget's remaining time at the loop's pace: each running experiment's remaining share of the mean duration
 * (from its steps), plus the queued ones, spread over the parallel slots. A plateau can end the loop sooner.
 */
export function eta(c: LoopCounts, running: RunningExperiment[], parallelism: number): number | undefined {
  if (c.meanSeconds === undefined) return undefined;
  const mean = c.meanSeconds;
  const left = running.reduce((a, r) => a + (r.totalSteps > 0 ? Math.max(0, 1 - r.step / r.totalSteps) : 1) * mean, 0) + c.queued * mean;
  return left / Math.max(1, parallelism);
}
