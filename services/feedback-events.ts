// What the outer loop does with stored feedback events (services/feedback-store.ts writes them): an iteration's claim
// ingests every event not yet ingested (its watermark), a new attempt takes over what its failed predecessor ingested,
// and the teacher step samples the failures among them.
import { and, eq, inArray, isNull, lte, or, sql } from 'drizzle-orm';
import { feedbackEvents } from '../db/schema';
import type { Queryable } from './queryable';

export type FeedbackEventRow = typeof feedbackEvents.$inferSelect;

const pendingOf = (campaignId: string) => and(eq(feedbackEvents.campaignId, campaignId), isNull(feedbackEvents.ingestedBy));

/** How many of the campaign's events no iteration has ingested yet. */
export async function pendingFeedbackCount(q: Queryable, campaignId: string): Promise<number> {
  const [{ n }] = await q
    .select({ n: sql<number>`count(*)::int` })
    .from(feedbackEvents)
    .where(pendingOf(campaignId));
  return n;
}

/**
 * Marks every event of the campaign not yet ingested as ingested by `iterationId`, and returns what that iteration
 * has ingested: how many events, and the first and last time one was received (null when none).
 */
export async function ingestPendingFeedback(
  q: Queryable,
  campaignId: string,
  iterationId: string,
): Promise<{ n: number; from: Date | null; to: Date | null }> {
  await q.update(feedbackEvents).set({ ingestedBy: iterationId }).where(pendingOf(campaignId));
  const [span] = await q
    .select({
      n: sql<number>`count(*)::int`,
      from: sql<string | null>`min(${feedbackEvents.receivedAt})`,
      to: sql<string | null>`max(${feedbackEvents.receivedAt})`,
    })
    .from(feedbackEvents)
    .where(eq(feedbackEvents.ingestedBy, iterationId));
  return { n: span.n, from: span.from === null ? null : new Date(span.from), to: span.to === null ? null : new Date(span.to) };
}

/** Hands the events `fromIterationId` ingested to `toIterationId` (a new attempt of a failed iteration). */
export async function moveIngestedFeedback(q: Queryable, fromIterationId: string, toIterationId: string): Promise<void> {
  await q.update(feedbackEvents).set({ ingestedBy: toIterationId }).where(eq(feedbackEvents.ingestedBy, fromIterationId));
}

/** The iteration's failures: edits, rejects and ratings of `failingRating` or less. */
const failingOf = (iterationId: string, failingRating: number) =>
  and(
    eq(feedbackEvents.ingestedBy, iterationId),
    or(inArray(feedbackEvents.kind, ['edit', 'reject']), and(eq(feedbackEvents.kind, 'rating'), lte(feedbackEvents.rating, failingRating))),
  );

/**
 * How many failures the iteration ingested, and the ids of a seeded sample of at most `limit` of them (ordered by
 * md5 of id and seed, so a retry draws the same sample).
 */
export async function sampleFailingFeedback(
  q: Queryable,
  iterationId: string,
  failingRating: number,
  seed: number,
  limit: number,
): Promise<{ failures: number; sampled: string[] }> {
  const failing = failingOf(iterationId, failingRating);
  const [{ n }] = await q
    .select({ n: sql<number>`count(*)::int` })
    .from(feedbackEvents)
    .where(failing);
  const sampled = await q
    .select({ id: feedbackEvents.id })
    .from(feedbackEvents)
    .where(failing)
    .orderBy(sql`md5(${feedbackEvents.id} || ${String(seed)})`)
    .limit(limit);
  return { failures: n, sampled: sampled.map((e) => e.id) };
}

/** The campaign's events among `ids`, by id (queried 1000 ids at a time; unknown ids and other campaigns' are absent). */
export async function campaignFeedbackEvents(q: Queryable, campaignId: string, ids: string[]): Promise<Map<string, FeedbackEventRow>> {
  const events = new Map<string, FeedbackEventRow>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await q
      .select()
      .from(feedbackEvents)
      .where(and(eq(feedbackEvents.campaignId, campaignId), inArray(feedbackEvents.id, ids.slice(i, i + 1000))));
    for (const r of rows) events.set(r.id, r);
  }
  return events;
}
