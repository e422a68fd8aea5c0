// The overlap check on a feedback event's raw fields, before any signal builder wraps or escapes them. A builder's
// output can hide what it was made from: a critic example JSON-escapes the event's prompt (newlines become `\n`,
// quotes `\"`) inside an instruction, so a prompt equal to a held-out item shares few of the item's n-grams once
// wrapped, and the check on the built example passes while the critique quotes the item's expected answer. So the
// event is checked as it was received and as the teacher answered it, and an event that overlaps any eval item yields
// no signal at all (buildDatasetVersion drops it whole and records the drop). Pure.
import type { TrainingSignal } from '../teacher/builtin-teacher';
import type { OverlapIndex } from './overlap';

/** What one critique holds of its feedback event and of what was said about it, raw. */
export interface RawFeedbackFields {
  /** The event's prompt and the production model's output, as received. */
  event?: { prompt: string; output: string };
  /** The critique's text. */
  text: string;
  /** The teacher's signals: an `sft` target is the user's correction; a `pair` holds it and the output. */
  signals: readonly TrainingSignal[];
  revision?: { output: string };
}

/**
 * The texts compared with eval items: the event's prompt followed by each answer to it (the output, the correction,
 * the revision, the critique), as an eval item is its prompt followed by its reference; and each signal's own prompt
 * with its answers, where a teacher gave a prompt of its own. Each answer after the prompt, not alone: the item's
 * n-grams that span its prompt and reference are then found too, and every n-gram of either part alone still is.
 */
export function rawTextsOf(c: RawFeedbackFields): string[] {
  const prompt = c.event?.prompt ?? '';
  const answers = [c.event?.output, c.revision?.output, c.text].filter((a): a is string => a !== undefined);
  const texts = answers.map((a) => prompt + a);
  for (const s of c.signals) {
    if (s.kind === 'none') continue;
    for (const a of s.kind === 'sft' ? [s.target] : [s.chosen, s.rejected]) {
      texts.push(prompt + a);
      if (s.prompt !== prompt) texts.push(s.prompt + a);
    }
  }
  return [...new Set(texts)];
}

/** The eval items (their ids, each once) that any of the critique's raw texts overlaps; empty when none. */
export function rawOverlapOf(index: OverlapIndex, c: RawFeedbackFields): string[] {
  const ids = new Set<string>();
  for (const t of rawTextsOf(c)) for (const id of index.overlapOf(t)?.evalIds ?? []) ids.add(id);
  return [...ids];
}
