// critiqueFeedback: the outer loop's teacher step. Each sampled failure (an edit, a reject, a low rating) gets a
// plain-English critique and the training signals made from it, stored with a link to its feedback event. The
// teacher is chosen by the caller (critiqueIterationFeedback): the built-in one unless a model is configured.
import { and, eq, inArray } from 'drizzle-orm';
import { builtinTeacher, type TaughtCritique } from '../../agents/teacher';
import { BUILTIN_TEACHER, BUILTIN_PREAMBLE, BUILTIN_TEACHER_PROMPT_VERSION, type TrainingSignal } from '../../core/teacher/builtin-teacher';
import type { Db } from '../../db/client';
import { critiques, feedbackEvents } from '../../db/schema';
import { teachFailures, type TeacherChoice } from './teach-failures';
import type { CritiqueFeedbackResult } from '../../contracts/outer-activities';

export interface CritiqueFeedbackInput {
  campaignId: string;
  /** Feedback event ids (the sample the outer loop drew); ids of other campaigns or unknown ids are counted as missing. */
  eventIds: string[];
  /** The outer iteration asking, recorded on each critique. */
  outerIterationId?: string;
}

/** Ratings at or below this are failures (without a reference). */
export const FAILING_RATING = 2;

export const critiqueIdOf = (campaignId: string, eventId: string): string => `${campaignId}/critique/${eventId}`;

/** What `critiques.signal` holds: the teacher's signals, in order (an `sft` first when there is one). */
export type StoredSignal = TrainingSignal[];

/**
 * Which events are failures, and what the teacher can make of them:
 * - `edit`: the correction is the reference; the teacher critiques the output against it and yields an `sft`
 *   signal (and a `pair` when the output was non-empty). The reference is always the target, whichever teacher.
 * - `reject`, or a `rating` of {@link FAILING_RATING} or less: a failure with no reference. Nothing verifiable can
 *   be derived, so the critique says so (quoting the user's comment, if any) and its signal is
 *   `[{ kind: 'none', why }]`: recorded, so the sample is accounted for, but never an example. No model is asked.
 * - `accept` and higher ratings are not failures and get no critique.
 * A failure already critiqued (a retry) is not sent to the teacher again; its stored signals are counted.
 * Batches of 1000 ids per query, so a large sample never builds one huge statement.
 */
export async function critiqueFeedback(
  db: Db,
  input: CritiqueFeedbackInput,
  choice: TeacherChoice = { teacher: builtinTeacher },
): Promise<CritiqueFeedbackResult> {
  const ids = [...new Set(input.eventIds)];
  const events = new Map<string, typeof feedbackEvents.$inferSelect>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await db
      .select()
      .from(feedbackEvents)
      .where(and(eq(feedbackEvents.campaignId, input.campaignId), inArray(feedbackEvents.id, ids.slice(i, i + 1000))));
    for (const r of rows) events.set(r.id, r);
  }

  const counts = { created: 0, withExample: 0, noSignal: 0, skipped: 0, missing: ids.length - events.size };
  const failures: Event[] = [];
  for (const id of ids) {
    const e = events.get(id);
    if (!e) continue;
    const failing = e.kind === 'edit' || e.kind === 'reject' || (e.kind === 'rating' && (e.rating ?? 5) <= FAILING_RATING);
    if (failing) failures.push(e);
    else counts.skipped++;
  }
  const critiqueIds = failures.map((e) => critiqueIdOf(input.campaignId, e.id));
  const stored = await storedSignals(db, critiqueIds);
  const tally = (signals: StoredSignal) => (signals.some((s) => s.kind === 'sft') ? counts.withExample++ : counts.noSignal++);
  for (const signals of stored.values()) tally(signals);

  const row = (
    e: Event,
    made: { text: string; signals: TrainingSignal[]; teacher: string; promptVersion: string },
  ): typeof critiques.$inferInsert => {
    tally(made.signals);
    const comment = e.comment ? ` The user commented: ${JSON.stringify(e.comment)}.` : '';
    return {
      id: critiqueIdOf(input.campaignId, e.id),
      campaignId: input.campaignId,
      outerIterationId: input.outerIterationId ?? null,
      sourceKind: 'feedback',
      sourceId: e.id,
      teacher: made.teacher,
      promptVersion: made.promptVersion,
      text: made.text + comment,
      signal: made.signals satisfies StoredSignal,
    };
  };
  const write = async (rows: (typeof critiques.$inferInsert)[]) => {
    for (let i = 0; i < rows.length; i += 500) {
      const written = await db
        .insert(critiques)
        .values(rows.slice(i, i + 500))
        .onConflictDoNothing()
        .returning({ id: critiques.id });
      counts.created += written.length;
    }
  };

  const fresh = failures.filter((e) => !stored.has(critiqueIdOf(input.campaignId, e.id)));
  await write(
    fresh.filter((e) => !isReferenced(e)).map((e) => row(e, unreferenced(e.kind === 'reject' ? 'rejected' : `rated ${e.rating} of 5`))),
  );
  await teachFailures(
    choice,
    fresh.filter(isReferenced),
    (e) => ({ prompt: e.prompt, output: e.output, reference: e.correction, category: choice.task?.categoryOf?.(e.prompt) }),
    (made) => write(made.map((m) => row(m.item, m.taught))),
  );
  return { critiqueIds, counts };
}

type Event = typeof feedbackEvents.$inferSelect;

const isReferenced = (e: Event): e is Event & { correction: string } => e.kind === 'edit' && e.correction !== null;

/** The signals of critiques already written (by an earlier attempt), by id. */
async function storedSignals(db: Db, ids: string[]): Promise<Map<string, StoredSignal>> {
  const out = new Map<string, StoredSignal>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await db
      .select({ id: critiques.id, signal: critiques.signal })
      .from(critiques)
      .where(inArray(critiques.id, ids.slice(i, i + 1000)));
    for (const r of rows) out.set(r.id, r.signal as StoredSignal);
  }
  return out;
}

function unreferenced(what: string): TaughtCritique {
  const why = `the output was ${what} without a correction: there is no reference to derive a target or a preferred output from`;
  return {
    text: `${BUILTIN_PREAMBLE} The output was ${what} without a correction, so there is no reference to compare it with and no training example can be derived.`,
    signals: [{ kind: 'none', why }],
    teacher: BUILTIN_TEACHER,
    promptVersion: BUILTIN_TEACHER_PROMPT_VERSION,
  };
}
