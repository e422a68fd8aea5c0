// Capacity slots: how many training jobs a campaign (`backend.maxConcurrent`) and a backend kind (the `capacity`
// table) hold at once. A grant is a `capacity_slots` row keyed by the run id; every grant happens under one
// transaction-level advisory lock (inside the server-side function flywheel_try_acquire_slot, migration 0013), and each
// release NOTIFYs the channel waiting acquires LISTEN on.
import { and, count, eq, lt, sql } from 'drizzle-orm';
import { Client } from 'pg';
import type { Db } from '../db/client';
import { capacitySlots, experiments } from '../db/schema';
import type { Queryable } from './queryable';

/** The channel a release (or a reap) notifies; the payload is the backend kind. */
export const CAPACITY_CHANNEL = 'flywheel_capacity';
/** An arbitrary constant: the transaction-level advisory lock that serialises grants (passed to the function). */
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

/** What `flywheel_try_acquire_slot` returns (db/migrations/0013_capacity_grant.sql). */
interface GrantRow extends Record<string, unknown> {
  granted: boolean;
  waited: number | null;
  already_held: boolean | null;
  campaign_held: number | null;
  backend_held: number | null;
  backend_limit: number | null;
}

/**
 * One try: the run's existing grant, a new grant when both limits allow it, or the counts that refused it. One
 * statement: the server-side function takes the advisory lock, finds the run's own slot, reaps the slots of ended
 * runs, counts, and inserts the grant with its wait, in one transaction (what was ten round trips).
 */
export async function tryAcquireSlot(q: Queryable, req: SlotRequest): Promise<SlotAnswer> {
  const { rows } = await q.execute<GrantRow>(
    sql`SELECT * FROM flywheel_try_acquire_slot(${CAPACITY_LOCK_KEY}::bigint, ${CAPACITY_CHANNEL}, ${req.runId}, ${req.experimentId},
      ${req.campaignId}, ${req.backend}, ${req.campaignLimit}::integer, ${req.waitedSeconds}::double precision)`,
  );
  const [row] = rows;
  if (row.granted) return { granted: true, waitedSeconds: row.waited!, alreadyHeld: row.already_held === true };
  return { granted: false, campaignHeld: row.campaign_held!, backendHeld: row.backend_held!, backendLimit: row.backend_limit };
}

/**
 * Frees the run's slot (idempotent) and wakes the waiters, in one statement: the NOTIFY is delivered when it commits.
 * Returns whether a slot was held.
 */
export async function releaseSlot(q: Queryable, runId: string): Promise<boolean> {
  const { gone } = slotRelease(q, runId);
  const notified = await q
    .with(gone)
    .select({ backend: gone.backend, notify: sql`pg_notify(${CAPACITY_CHANNEL}, ${gone.backend})` })
    .from(gone);
  return notified.length > 0;
}

/**
 * The release as a data-modifying WITH (`gone`: the slot deleted, its backend returned), for a statement that does
 * more (recordRunEnd), with the expression that wakes the waiters once per slot deleted: the NOTIFY is a call, so the
 * statement must read it (a WITH nobody reads still deletes, but calls nothing).
 */
export function slotRelease(q: Queryable, runId: string) {
  const gone = q
    .$with('gone')
    .as(q.delete(capacitySlots).where(eq(capacitySlots.runId, runId)).returning({ backend: capacitySlots.backend }));
  return { gone, notifyWaiters: sql<number>`(SELECT count(pg_notify(${CAPACITY_CHANNEL}, "backend")) FROM "gone")` };
}

/**
 * Slots held by runs that have not launched or not ended, older than `olderThanSeconds`: candidates for a liveness
 * check, with the inner loop of each one's experiment (an experiment run inline has no workflow of its own).
 */
export async function suspectSlots(
  q: Queryable,
  backend: string,
  olderThanSeconds: number,
): Promise<{ runId: string; experimentId: string; innerLoopId: string | null }[]> {
  return q
    .select({ runId: capacitySlots.runId, experimentId: capacitySlots.experimentId, innerLoopId: experiments.innerLoopId })
    .from(capacitySlots)
    .leftJoin(experiments, eq(experiments.id, capacitySlots.experimentId))
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
