// Reads what a running inner loop looks like right now: the workflow's status and leaderboard queries,
// plus each running experiment's latest step from PostgreSQL (the metrics never pass through Temporal).
import type { WorkflowHandle } from '@temporalio/client';
import type { Db } from '../db/client';
import { experimentCountsOf, runningExperimentRows } from '../services/queries/loop-progress';
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
  for (const r of await runningExperimentRows(db, status.running)) {
    const elapsedSeconds = r.startedAt ? Math.max(0, (now - r.startedAt.getTime()) / 1000) : undefined;
    running.push({
      experimentId: r.id,
      step: r.latest?.step ?? 0,
      totalSteps: Number(r.params.steps ?? defaultSteps),
      loss: r.latest?.loss,
      elapsedSeconds,
    });
  }
  const counts = await loopCounts(db, handle.workflowId, status);
  return { status, leaderboard, running, counts, etaSeconds: eta(counts, running, status.parallelism) };
}

async function loopCounts(db: Db, innerLoopId: string, status: InnerLoopStatus): Promise<LoopCounts> {
  const byStatus: Record<string, number> = {};
  let meanSeconds: number | undefined;
  for (const row of await experimentCountsOf(db, innerLoopId)) {
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
