// Capacity slots: how many training jobs a campaign (`backend.maxConcurrent`) and a backend kind (the `capacity`
// table) hold at once. A grant is a `capacity_slots` row keyed by the run id; every grant happens under one
// transaction-level advisory lock, and each release NOTIFYs the channel waiting acquires LISTEN on.
import { and, count, eq, inArray, isNotNull, lt, sql } from 'drizzle-orm';
import { Client } from 'pg';
import type { Db } from '../db/client';
import { capacity, capacitySlots, trainingRuns } from '../db/schema';
import { addCapacityWait } from './experiments';
import type { Queryable } from './queryable';

/** The channel a release (or a reap) notifies; the payload is the backend kind. */
export const CAPACITY_CHANNEL = 'flywheel_capacity';
/** An arbitrary constant: the transaction-level advisory lock that serialises grants. */
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
  return db.transaction(async (tx): Promise<SlotAnswer> => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${CAPACITY_LOCK_KEY})`);
    const waited = await slotWait(tx, req.runId);
    if (waited !== undefined) return { granted: true, waitedSeconds: waited, alreadyHeld: true };
    await reapEnded(tx);
    const campaignHeld = await heldSlots(tx, { campaignId: req.campaignId });
    const backendHeld = await heldSlots(tx, { backend: req.backend });
    const [limit] = await tx.select({ maxJobs: capacity.maxJobs }).from(capacity).where(eq(capacity.backend, req.backend));
    const backendLimit = limit?.maxJobs ?? null;
    if (campaignHeld >= req.campaignLimit || (backendLimit !== null && backendHeld >= backendLimit)) {
      return { granted: false, campaignHeld, backendHeld, backendLimit };
    }
    await tx.insert(capacitySlots).values({
      runId: req.runId,
      experimentId: req.experimentId,
      campaignId: req.campaignId,
      backend: req.backend,
      waitedSeconds: req.waitedSeconds,
    });
    // The wait is added once per run: the insert above happens once per run id.
    await addCapacityWait(tx, req.experimentId, req.waitedSeconds);
    return { granted: true, waitedSeconds: req.waitedSeconds, alreadyHeld: false };
  });
}

/** Seconds the run waited for the slot it holds; undefined when it holds none. */
export async function slotWait(q: Queryable, runId: string): Promise<number | undefined> {
  const [slot] = await q.select({ waited: capacitySlots.waitedSeconds }).from(capacitySlots).where(eq(capacitySlots.runId, runId));
  return slot?.waited;
}

/** Wakes the waiting acquires, once per freed slot (delivered when the freeing transaction commits). */
async function notifyReleased(q: Queryable, backends: readonly { backend: string }[]): Promise<void> {
  for (const { backend } of backends) await q.execute(sql`SELECT pg_notify(${CAPACITY_CHANNEL}, ${backend})`);
}

/** Frees the run's slot (idempotent) and wakes the waiters. Returns whether a slot was held. */
export async function releaseSlot(db: Db, runId: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const gone = await tx.delete(capacitySlots).where(eq(capacitySlots.runId, runId)).returning({ backend: capacitySlots.backend });
    await notifyReleased(tx, gone);
    return gone.length > 0;
  });
}

/**
 * The stale-holder reaper: frees slots whose run has ended per `training_runs` (a release that never ran: the
 * workflow was terminated, or reset past its release). Runs inside every grant attempt, under the lock.
 */
async function reapEnded(q: Queryable): Promise<void> {
  const ended = q.select({ id: trainingRuns.id }).from(trainingRuns).where(isNotNull(trainingRuns.endedAt));
  const gone = await q.delete(capacitySlots).where(inArray(capacitySlots.runId, ended)).returning({ backend: capacitySlots.backend });
  await notifyReleased(q, gone);
}

/** Slots held by runs that have not launched or not ended, older than `olderThanSeconds`: candidates for a liveness check. */
export async function suspectSlots(
  q: Queryable,
  backend: string,
  olderThanSeconds: number,
): Promise<{ runId: string; experimentId: string }[]> {
  return q
    .select({ runId: capacitySlots.runId, experimentId: capacitySlots.experimentId })
    .from(capacitySlots)
    .where(
      and(
        eq(capacitySlots.backend, backend),
        // The database's clock, as the grant's `acquired_at` default: a worker's clock may be off.
        lt(capacitySlots.acquiredAt, sql<Date>`now() - make_interval(secs => ${olderThanSeconds})`),
      ),
    );
}

/** Slots held now, by campaign or by backend kind (both: held by the campaign on that backend). */
export async function heldSlots(q: Queryable, where: { campaignId?: string; backend?: string } = {}): Promise<number> {
  const [row] = await q
    .select({ n: count() })
    .from(capacitySlots)
    .where(
      and(
        where.campaignId === undefined ? undefined : eq(capacitySlots.campaignId, where.campaignId),
        where.backend === undefined ? undefined : eq(capacitySlots.backend, where.backend),
      ),
    );
  return row.n;
}

/** A waiting acquire's subscription to releases: `close` ends its dedicated connection. */
export interface ReleaseListener {
  close(): Promise<void>;
}

/**
 * Calls `onRelease` on every release's NOTIFY, and on a lost connection (the caller's fallback re-check carries on).
 * A dedicated client, not the pool's: LISTEN holds its connection for as long as it waits.
 */
export async function listenForReleases(db: Db, onRelease: () => void): Promise<ReleaseListener> {
  const listener = new Client(db.$client.options);
  listener.on('error', () => onRelease());
  listener.on('notification', () => onRelease());
  const close = () => listener.end().catch(() => undefined);
  try {
    await listener.connect();
    await listener.query(`LISTEN ${CAPACITY_CHANNEL}`);
  } catch (e) {
    await close();
    throw e;
  }
  return { close };
}
