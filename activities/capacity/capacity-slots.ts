// Capacity slots in PostgreSQL: how many training jobs a campaign (`backend.maxConcurrent`) and a backend kind (the
// `capacity` table) hold at once. A grant is a `capacity_slots` row keyed by the run id; every change happens under
// one advisory lock, and each release NOTIFYs the channel waiting acquires LISTEN on.
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';

/** The channel a release (or a reap) notifies; the payload is the backend kind. */
export const CAPACITY_CHANNEL = 'flywheel_capacity';
/** An arbitrary constant: the transaction-level advisory lock that serialises grants and releases. */
const CAPACITY_LOCK_KEY = 0x46_77_43_70; // "FwCp"

export interface SlotRequest {
  runId: string;
  experimentId: string;
  campaignId: string;
  backend: string;
  /** The campaign's `backend.maxConcurrent`. */
  campaignLimit: number;
  /** Seconds waited so far, recorded with the grant. */
  waitedSeconds: number;
}

export type SlotAnswer =
  | { granted: true; waitedSeconds: number; alreadyHeld: boolean }
  | { granted: false; campaignHeld: number; backendHeld: number; backendLimit: number | null };

/** One try: the run's existing grant, a new grant when both limits allow it, or the counts that refused it. */
export async function tryAcquireSlot(db: Db, req: SlotRequest): Promise<SlotAnswer> {
  return db.$client.connect().then(async (c) => {
    try {
      await c.query('BEGIN');
      await c.query('SELECT pg_advisory_xact_lock($1)', [CAPACITY_LOCK_KEY]);
      const held = await c.query<{ waited_seconds: number }>('SELECT waited_seconds FROM capacity_slots WHERE run_id = $1', [req.runId]);
      if (held.rows.length > 0) {
        await c.query('COMMIT');
        return { granted: true, waitedSeconds: held.rows[0].waited_seconds, alreadyHeld: true };
      }
      await reapEnded(c);
      const counts = await c.query<{ campaign_held: number; backend_held: number; backend_limit: number | null }>(
        `SELECT (SELECT count(*)::int FROM capacity_slots WHERE campaign_id = $1) AS campaign_held,
                (SELECT count(*)::int FROM capacity_slots WHERE backend = $2) AS backend_held,
                (SELECT max_jobs FROM capacity WHERE backend = $2) AS backend_limit`,
        [req.campaignId, req.backend],
      );
      const { campaign_held, backend_held, backend_limit } = counts.rows[0];
      if (campaign_held >= req.campaignLimit || (backend_limit !== null && backend_held >= backend_limit)) {
        await c.query('COMMIT');
        return { granted: false, campaignHeld: campaign_held, backendHeld: backend_held, backendLimit: backend_limit };
      }
      await c.query(
        'INSERT INTO capacity_slots (run_id, experiment_id, campaign_id, backend, waited_seconds) VALUES ($1, $2, $3, $4, $5)',
        [req.runId, req.experimentId, req.campaignId, req.backend, req.waitedSeconds],
      );
      // The wait is added once per run: the insert above happens once per run id.
      await c.query('UPDATE experiments SET capacity_wait_seconds = coalesce(capacity_wait_seconds, 0) + $2 WHERE id = $1', [
        req.experimentId,
        req.waitedSeconds,
      ]);
      await c.query('COMMIT');
      return { granted: true, waitedSeconds: req.waitedSeconds, alreadyHeld: false };
    } catch (e) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      c.release();
    }
  });
}

/** Frees the run's slot (idempotent) and wakes the waiters. Returns whether a slot was held. */
export async function releaseSlot(db: Db, runId: string): Promise<boolean> {
  const r = await db.execute<{ backend: string }>(sql`
    WITH gone AS (DELETE FROM capacity_slots WHERE run_id = ${runId} RETURNING backend)
    SELECT backend, pg_notify(${CAPACITY_CHANNEL}, backend) FROM gone`);
  return r.rows.length > 0;
}

/**
 * The stale-holder reaper: frees slots whose run has ended per `training_runs` (a release that never ran: the
 * workflow was terminated, or reset past its release). Runs inside every grant attempt, under the lock.
 */
async function reapEnded(c: { query: (q: string) => Promise<unknown> }): Promise<void> {
  await c.query(`
    WITH gone AS (
      DELETE FROM capacity_slots s USING training_runs r WHERE r.id = s.run_id AND r.ended_at IS NOT NULL RETURNING s.backend
    )
    SELECT pg_notify('${CAPACITY_CHANNEL}', backend) FROM gone`);
}

/** Frees the slots of these runs (their workflow is gone); used by the acquire's liveness check. */
export async function reapRuns(db: Db, runIds: string[]): Promise<number> {
  if (runIds.length === 0) return 0;
  let n = 0;
  for (const runId of runIds) if (await releaseSlot(db, runId)) n++;
  return n;
}

/** Slots held by runs that have not launched or not ended, older than `olderThanSeconds`: candidates for a liveness check. */
export async function suspectSlots(db: Db, backend: string, olderThanSeconds: number): Promise<{ runId: string; experimentId: string }[]> {
  const r = await db.execute<{ run_id: string; experiment_id: string }>(sql`
    SELECT run_id, experiment_id FROM capacity_slots
    WHERE backend = ${backend} AND acquired_at < now() - make_interval(secs => ${olderThanSeconds})`);
  return r.rows.map((x) => ({ runId: x.run_id, experimentId: x.experiment_id }));
}

/** Slots held now, by campaign or by backend kind. */
export async function heldSlots(db: Db, where: { campaignId?: string; backend?: string } = {}): Promise<number> {
  const r = await db.execute<{ n: number }>(sql`
    SELECT count(*)::int AS n FROM capacity_slots
    WHERE (${where.campaignId ?? null}::text IS NULL OR campaign_id = ${where.campaignId ?? null})
      AND (${where.backend ?? null}::text IS NULL OR backend = ${where.backend ?? null})`);
  return r.rows[0].n;
}
