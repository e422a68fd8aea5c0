// The `temporal-prune` fault's aim: a prune in flight is a training run whose verdict (pruned) is stored while its end
// is not yet recorded, the window in which awaitTraining is killing the trainer and a lost completion makes the
// activity run again. The harness polls for one, kills Temporal at once, and says afterwards whether it hit.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Pool } from 'pg';
import type { ExperimentHistories } from './experiment-histories';

/** How long the fault waits, from its moment, for a prune to begin. */
export const PRUNE_WAIT_MS = 60_000;
/** How often PostgreSQL is asked: the window lasts from the verdict to the run's recorded end (the kill of the trainer). */
const POLL_MS = 20;

export interface PruneHit {
  runId: string;
  /** Whether the run's end was recorded after the kill (or not yet): the kill landed inside the prune window. */
  landed: boolean;
  /** When the run's end was recorded, relative to the kill (negative: before it, the window missed); undefined while none. */
  endedMs?: number;
  /** awaitTraining attempts of that run, read from the experiment's history after the loop (2 or more: it reattached). */
  awaitAttempts?: number;
}

/** The first run whose prune has begun (verdict stored) and whose end is not recorded; undefined when none began in time. */
export async function waitForPrune(pool: Pool, timeoutMs: number, stop: () => boolean): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (!stop() && Date.now() < deadline) {
    const r = await pool
      .query(`SELECT id FROM training_runs WHERE verdict->>'status' = 'pruned' AND ended_at IS NULL ORDER BY id LIMIT 1`)
      .catch(() => ({ rows: [] as { id: string }[] })); // PostgreSQL down: another fault's, keep waiting
    if (r.rows[0]) return r.rows[0].id as string;
    await sleep(POLL_MS);
  }
  return undefined;
}

/** Read right after the kill: did the run's end come after it? */
export async function pruneHit(pool: Pool, runId: string, killedAt: number): Promise<PruneHit> {
  const row = (await pool.query(`SELECT ended_at FROM training_runs WHERE id = $1`, [runId])).rows[0] as
    { ended_at: Date | null } | undefined;
  const endedMs = row?.ended_at ? row.ended_at.getTime() - killedAt : undefined;
  return { runId, landed: endedMs === undefined || endedMs >= 0, endedMs };
}

/** Whether a `temporal-prune` kill landed inside the prune window, in words. */
export function describeHit(h: PruneHit): string {
  const ended =
    h.endedMs === undefined
      ? 'not yet recorded at the kill'
      : `recorded ${Math.abs(h.endedMs)} ms ${h.endedMs >= 0 ? 'after' : 'before'} the kill`;
  return `${h.landed ? 'in the prune window' : 'missed the window'} of ${h.runId}: its end ${ended}`;
}

/**
 * awaitTraining attempts for run `${experimentId}/rN`: the Nth awaitTraining the experiment scheduled, and the attempt
 * its started event records (Temporal writes that event once, with the last attempt, when the activity closes).
 */
export async function awaitTrainingAttempts(histories: ExperimentHistories, runId: string): Promise<number | undefined> {
  const m = /^(.*)\/r(\d+)$/.exec(runId);
  if (!m) return undefined;
  // The experiment's own history, or its events in its loop's when it ran inline.
  const events = await histories.of(m[1]);
  // awaitTraining before FEWER_ROUND_TRIPS, runTraining after: the activity that follows the run to its end.
  const follows = (e: (typeof events)[number]) =>
    ['awaitTraining', 'runTraining'].includes(e.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
  const scheduled = events.filter(follows)[Number(m[2]) - 1];
  if (!scheduled) return undefined;
  const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled.eventId));
  return started?.activityTaskStartedEventAttributes?.attempt ?? undefined;
}
