// Critiques: the teacher's plain-English account of one failure (a feedback event, or a public eval item) with the
// training signals made from it (`signal`, TrainingSignal[]), keyed by what it critiques so a retry never asks the
// teacher twice; and revisions: the production model's second answer to a critiqued failure (the `revision`
// signal), keyed by its critique. The dataset builder reads both, with the feedback event behind each.
import { and, eq, inArray } from 'drizzle-orm';
import type { TrainingSignal } from '../core/teacher/builtin-teacher';
import { critiques, feedbackEvents, revisions } from '../db/schema';
import type { Queryable } from './queryable';

export type Critique = typeof critiques.$inferSelect;
export type NewCritique = typeof critiques.$inferInsert;
export type NewRevision = typeof revisions.$inferInsert;

/** Records the critiques not recorded yet (ON CONFLICT DO NOTHING, 500 a statement); how many this call wrote. */
export async function recordCritiques(q: Queryable, rows: NewCritique[]): Promise<number> {
  let written = 0;
  for (let i = 0; i < rows.length; i += 500)
    written += (
      await q
        .insert(critiques)
        .values(rows.slice(i, i + 500))
        .onConflictDoNothing()
        .returning({ id: critiques.id })
    ).length;
  return written;
}

/** Which of `ids` are recorded critiques. */
export async function recordedCritiqueIds(q: Queryable, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await q.select({ id: critiques.id }).from(critiques).where(inArray(critiques.id, ids));
  return new Set(rows.map((r) => r.id));
}

/** The signals of the recorded critiques among `ids`, by id (queried 1000 ids at a time). */
export async function critiqueSignals(q: Queryable, ids: string[]): Promise<Map<string, TrainingSignal[]>> {
  const out = new Map<string, TrainingSignal[]>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await q
      .select({ id: critiques.id, signal: critiques.signal })
      .from(critiques)
      .where(inArray(critiques.id, ids.slice(i, i + 1000)));
    for (const r of rows) out.set(r.id, r.signal);
  }
  return out;
}

/** The ids of the feedback critiques an iteration made. */
export async function feedbackCritiqueIds(q: Queryable, iterationId: string): Promise<string[]> {
  const rows = await q
    .select({ id: critiques.id })
    .from(critiques)
    .where(and(eq(critiques.outerIterationId, iterationId), eq(critiques.sourceKind, 'feedback')));
  return rows.map((c) => c.id);
}

/** Hands the feedback critiques of `fromIterationId` to `toIterationId` (keyed by their event: never critiqued twice). */
export async function moveFeedbackCritiques(q: Queryable, fromIterationId: string, toIterationId: string): Promise<void> {
  await q
    .update(critiques)
    .set({ outerIterationId: toIterationId })
    .where(and(eq(critiques.outerIterationId, fromIterationId), eq(critiques.sourceKind, 'feedback')));
}

/** A feedback critique with the failure it critiques: the event's prompt, output and correction. */
export interface CritiquedFeedback {
  id: string;
  text: string;
  prompt: string;
  output: string;
  correction: string | null;
}

/** The iteration's feedback critiques whose event is the campaign's, in id order. */
export async function critiquedFeedback(q: Queryable, campaignId: string, iterationId: string): Promise<CritiquedFeedback[]> {
  return q
    .select({
      id: critiques.id,
      text: critiques.text,
      prompt: feedbackEvents.prompt,
      output: feedbackEvents.output,
      correction: feedbackEvents.correction,
    })
    .from(critiques)
    .innerJoin(feedbackEvents, and(eq(feedbackEvents.id, critiques.sourceId), eq(feedbackEvents.campaignId, campaignId)))
    .where(and(eq(critiques.outerIterationId, iterationId), eq(critiques.sourceKind, 'feedback')))
    .orderBy(critiques.id);
}

/** Which of the critiques `critiqueIds` have a revision recorded. */
export async function revisedCritiqueIds(q: Queryable, critiqueIds: string[]): Promise<Set<string>> {
  const rows = await q.select({ critiqueId: revisions.critiqueId }).from(revisions).where(inArray(revisions.critiqueId, critiqueIds));
  return new Set(rows.map((r) => r.critiqueId));
}

/** Records the revisions not recorded yet (ON CONFLICT DO NOTHING, 500 a statement). */
export async function recordRevisions(q: Queryable, rows: NewRevision[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500)
    await q
      .insert(revisions)
      .values(rows.slice(i, i + 500))
      .onConflictDoNothing();
}

/** A critique with what the dataset builder derives signals from: its feedback event, and its revision. */
export type CritiqueWithSources = Critique & {
  /** The feedback event's prompt, output and category, if it named one (a `feedback` critique whose event exists). */
  event?: { prompt: string; output: string; category: string | null };
  revision?: { output: string; verified: boolean };
};

/** The campaign's critiques among `ids` with their events and revisions (1000 ids a query); unknown ids are absent. */
export async function critiquesWithSources(q: Queryable, campaignId: string, ids: string[]): Promise<CritiqueWithSources[]> {
  const rows: CritiqueWithSources[] = [];
  for (let i = 0; i < ids.length; i += 1000) {
    const found = await q
      .select({
        critique: critiques,
        event: { prompt: feedbackEvents.prompt, output: feedbackEvents.output, category: feedbackEvents.category },
        revision: { output: revisions.output, verified: revisions.verified },
      })
      .from(critiques)
      .leftJoin(
        feedbackEvents,
        and(eq(critiques.sourceKind, 'feedback'), eq(feedbackEvents.id, critiques.sourceId), eq(feedbackEvents.campaignId, campaignId)),
      )
      .leftJoin(revisions, eq(revisions.critiqueId, critiques.id))
      .where(and(eq(critiques.campaignId, campaignId), inArray(critiques.id, ids.slice(i, i + 1000))));
    for (const r of found) rows.push({ ...r.critique, event: r.event ?? undefined, revision: r.revision ?? undefined });
  }
  return rows;
}
