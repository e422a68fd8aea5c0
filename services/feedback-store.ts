// Writes validated feedback events, idempotently: the client's id is the key, so a retried request (HTTP or a
// re-run import) stores nothing twice, and a batch is all-or-nothing.
import { inArray } from 'drizzle-orm';
import type { FeedbackEvent } from '../core/feedback';
import type { Db } from '../db/client';
import { campaigns, feedbackEvents } from '../db/schema';
import { FlywheelError, NonRetryableError } from '../core/errors';

/** `"a", "b", "c", "d", "e" and 2 more`: the first five ids of a refusal, quoted. */
function someIds(ids: string[]): string {
  const shown = ids
    .slice(0, 5)
    .map((id) => `"${id}"`)
    .join(', ');
  return ids.length > 5 ? `${shown} and ${ids.length - 5} more` : shown;
}

/** An id that is already stored (or repeated within the batch) with other content; nothing of the batch was written. */
export class FeedbackConflictError extends NonRetryableError {
  constructor(readonly ids: string[]) {
    super(`feedback id${ids.length > 1 ? 's' : ''} ${someIds(ids)} already stored with different content`);
  }
}

/** One id twice in the batch with different content: the batch contradicts itself, and nothing of it was written. */
export class ConflictingCopiesError extends NonRetryableError {
  constructor(readonly ids: string[]) {
    super(
      `feedback id${ids.length > 1 ? 's' : ''} ${someIds(ids)} appear${ids.length > 1 ? '' : 's'} twice in the batch with different content; nothing stored`,
    );
  }
}

/** Feedback for a campaign that does not exist (a typo, or a client pointed at the wrong server): nothing stored. */
export class UnknownCampaignError extends NonRetryableError {
  constructor(readonly campaignIds: string[]) {
    super(`no campaign ${someIds(campaignIds)}: register it first (\`flywheel run\` or \`flywheel outer\`); nothing stored`);
  }
}

/** The database could not be reached (refused, timed out, shutting down): retrying later can help. */
export class DatabaseUnavailableError extends FlywheelError {}

export interface StoreResult {
  inserted: number;
  duplicates: number;
}

// 10 parameters a row: 500 rows stay far below PostgreSQL's 65535 bind parameters per statement.
const CHUNK = 500;

/** The stored fields, in a fixed order, with absent and NULL alike (an event, or a row read back). */
function contentKey(e: { [K in Exclude<keyof FeedbackEvent, 'id'>]?: string | number | null }): string {
  return JSON.stringify([
    e.campaignId,
    e.kind,
    e.modelVersion,
    e.prompt,
    e.output,
    e.correction ?? null,
    e.rating ?? null,
    e.comment ?? null,
    e.category ?? null,
  ]);
}

type Queryable = Pick<Db, 'insert' | 'select'>;

/** Inserts `rows` (sorted by id), returns how many were new; throws FeedbackConflictError, which rolls back a transaction. */
async function insertChecked(q: Queryable, rows: FeedbackEvent[]): Promise<number> {
  let n = 0;
  const conflicts: string[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const got = await q
      .insert(feedbackEvents)
      .values(chunk)
      .onConflictDoNothing({ target: feedbackEvents.id })
      .returning({ id: feedbackEvents.id });
    n += got.length;
    if (got.length === chunk.length) continue;
    // Skipped rows were committed by someone else (a concurrent insert of the same id waits for its commit).
    const fresh = new Set(got.map((r) => r.id));
    const existing = await q
      .select()
      .from(feedbackEvents)
      .where(
        inArray(
          feedbackEvents.id,
          chunk.filter((e) => !fresh.has(e.id)).map((e) => e.id),
        ),
      );
    const stored = new Map(existing.map((r) => [r.id, contentKey(r)]));
    for (const e of chunk) if (!fresh.has(e.id) && stored.get(e.id) !== contentKey(e)) conflicts.push(e.id);
  }
  if (conflicts.length) throw new FeedbackConflictError(conflicts);
  return n;
}

export interface StoreOptions {
  /**
   * Refuse the batch (UnknownCampaignError) when one of its campaigns does not exist, as the HTTP API and
   * `flywheel feedback import` do; tests and harnesses seed feedback before registering the campaign.
   * @default false
   */
  requireCampaign?: boolean;
}

export async function storeFeedback(db: Db, events: FeedbackEvent[], opts: StoreOptions = {}): Promise<StoreResult> {
  // The same id twice in one batch: one row, the copy a duplicate (or a conflict when they differ).
  const unique = new Map<string, FeedbackEvent>();
  const conflicts = new Set<string>();
  for (const e of events) {
    const seen = unique.get(e.id);
    if (!seen) unique.set(e.id, e);
    else if (contentKey(seen) !== contentKey(e)) conflicts.add(e.id);
  }
  if (conflicts.size) throw new ConflictingCopiesError([...conflicts]);
  // Rows are locked in id order, so two overlapping batches wait for each other instead of deadlocking.
  const rows = [...unique.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  try {
    if (opts.requireCampaign) {
      const ids = [...new Set(rows.map((e) => e.campaignId))];
      const known = new Set((await db.select({ id: campaigns.id }).from(campaigns).where(inArray(campaigns.id, ids))).map((c) => c.id));
      const missing = ids.filter((id) => !known.has(id));
      if (missing.length) throw new UnknownCampaignError(missing);
    }
    // One row needs no transaction: a single INSERT is atomic, and the conflict check after it writes nothing.
    // That saves BEGIN and COMMIT round trips on the hot path of the HTTP API (one event per request).
    const inserted = rows.length === 1 ? await insertChecked(db, rows) : await db.transaction((tx) => insertChecked(tx, rows));
    return { inserted, duplicates: events.length - inserted };
  } catch (e) {
    if (e instanceof FeedbackConflictError || e instanceof UnknownCampaignError) throw e;
    if (isUnavailable(e)) throw new DatabaseUnavailableError(`database unavailable: ${rootMessage(e)}`, { cause: e });
    throw e;
  }
}

// Node socket errors and PostgreSQL's connection-exception (08), insufficient-resources (53) and operator-intervention (57P) classes.
const UNAVAILABLE_CODES = /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|EPIPE|08...|53300|57P0[1-3])$/;
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|connection (is )?closed|Client has encountered a connection error/i;

/** The fields of an error we read; duck-typed because Node's socket errors may come from another realm (jest's vm). */
type ErrorLike = { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
const asError = (e: unknown): ErrorLike | undefined => (typeof e === 'object' && e !== null ? (e as ErrorLike) : undefined);

/** Whether `e` (or an error it wraps: drizzle puts the driver's error in `cause`) means the server cannot be reached. */
export function isUnavailable(e: unknown): boolean {
  for (let c = asError(e), depth = 0; c && depth < 5; c = asError(c.cause), depth++) {
    if (typeof c.code === 'string' && UNAVAILABLE_CODES.test(c.code)) return true;
    if (typeof c.message === 'string' && UNAVAILABLE_MESSAGES.test(c.message)) return true;
    if (Array.isArray(c.errors) && c.errors.some(isUnavailable)) return true;
  }
  return false;
}

/** The innermost driver message (`connect ECONNREFUSED 127.0.0.1:5432`): host and port, never the URL's password. */
function rootMessage(e: unknown): string {
  let c = asError(e);
  for (let depth = 0; c && asError(c.cause) && depth < 5; depth++) c = asError(c.cause);
  if (c && Array.isArray(c.errors) && asError(c.errors[0])) c = asError(c.errors[0]);
  return (typeof c?.message === 'string' && c.message) || (typeof c?.code === 'string' && c.code) || String(e);
}
