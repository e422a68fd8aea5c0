// critiqueFeedback: the outer loop's teacher step. Each sampled failure (an edit, a reject, a low rating) gets a
// plain-English critique and the training signals made from it, stored with a link to its feedback event. The
// teacher is chosen by the caller (critiqueIterationFeedback): the built-in one unless a model is configured.
import { builtinTeacher, type TaughtCritique } from '../../agents/teacher';
import { BUILTIN_TEACHER, BUILTIN_PREAMBLE, BUILTIN_TEACHER_PROMPT_VERSION, type TrainingSignal } from '../../core/teacher/builtin-teacher';
import type { Db } from '../../db/client';
import { critiqueSignals, recordCritiques, type NewCritique } from '../../services/critiques';
import { campaignFeedbackEvents, type FeedbackEventRow } from '../../services/feedback-events';
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
  const events = await campaignFeedbackEvents(db, input.campaignId, ids);

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
  // The signals of critiques already written (by an earlier attempt), by id.
  const stored = await critiqueSignals(db, critiqueIds);
  const tally = (signals: StoredSignal) => (signals.some((s) => s.kind === 'sft') ? counts.withExample++ : counts.noSignal++);
  for (const signals of stored.values()) tally(signals);

  const row = (e: Event, made: { text: string; signals: TrainingSignal[]; teacher: string; promptVersion: string }): NewCritique => {
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
  const write = async (rows: NewCritique[]) => {
    counts.created += await recordCritiques(db, rows);
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

type Event = FeedbackEventRow;

const isReferenced = (e: Event): e is Event & { correction: string } => e.kind === 'edit' && e.correction !== null;

function unreferenced(what: string): TaughtCritique {
  const why = `the output was ${what} without a correction: there is no reference to derive a target or a preferred output from`;
  return {
    text: `${BUILTIN_PREAMBLE} The output was ${what} without a correction, so there is no reference to compare it with and no training example can be derived.`,
    signals: [{ kind: 'none', why }],
    teacher: BUILTIN_TEACHER,
    promptVersion: BUILTIN_TEACHER_PROMPT_VERSION,
  };
}
