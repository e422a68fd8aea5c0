// The outer loop's signal builders (spec `outerLoop.signals`): what one critique of a user's feedback becomes in the
// next dataset version. Pure; activities/outer/build-dataset-version.ts runs them over the iteration's critiques.
// - reference: the verified correction (the teacher's `sft` signal, whose target is always the reference) as a
//   weighted SFT example — the behaviour before builders existed, source `critique`;
// - revision: a revision of the production model that verified (revisions table) as an SFT example (source
//   `revision`) and the chosen side of a pair over the original output; an unverified revision yields nothing;
// - critique: (prompt, output) → the critique's text (source `critic`), so the model learns to critique;
// - pairs: the verified reference chosen over the production output (source `pairs`).
// A critique of an eval item yields nothing (eval items never enter a dataset), nor does one with no `sft` signal
// for the reference-based builders. The rejected side of a pair is always the feedback event's real output.
import { createHash } from 'node:crypto';
import type { SftSignal, TrainingSignal } from '../teacher/builtin-teacher';
import { critiquePromptOf } from '../teacher/signal-prompts';
import type { SignalBuilder, SignalLineage, TrainPair } from './example-line';

/** A critique with what the builders read: its event's prompt and output, and the revision, if one was made. */
export interface CritiqueForSignals {
  critiqueId: string;
  /** `feedback` (a user's event) or `eval` (a public eval item: never a training signal). */
  sourceKind: string;
  sourceId: string;
  text: string;
  signals: TrainingSignal[];
  /** The feedback event's prompt and output: the production model's real answer. */
  event?: { prompt: string; output: string };
  revision?: { output: string; verified: boolean };
  /**
   * The category of the event's prompt (core/dataset/feedback-shape.ts: the event's own, else its nearest dataset
   * example's, else the task teacher's): every example and pair of the event carries it, over the teacher signal's.
   */
  category?: string;
}

export interface DerivedExample {
  prompt: string;
  completion: string;
  category: string;
  /** The example's own weight (before mix and loss weights). */
  weight: number;
  source: string;
  lineage: SignalLineage;
}

export type DerivedPair = TrainPair & { lineage: SignalLineage };

/** The source each builder's examples (and pairs) carry, the key of `outerLoop.mixWeights`. */
export const SOURCE_OF_BUILDER: Record<SignalBuilder, string> = {
  reference: 'critique',
  revision: 'revision',
  critique: 'critic',
  pairs: 'pairs',
};

/** The category of a critique example: it teaches critiquing, not the task's categories. */
export const CRITIQUE_CATEGORY = 'critique';

/** A pair's identity in a version: sha256 over its prompt, chosen and rejected. */
export const pairHashOf = (p: Pick<TrainPair, 'prompt' | 'chosen' | 'rejected'>): string =>
  createHash('sha256')
    .update(JSON.stringify([p.prompt, p.chosen, p.rejected]))
    .digest('hex');

export function buildSignals(
  c: CritiqueForSignals,
  builders: readonly SignalBuilder[],
): { examples: DerivedExample[]; pairs: DerivedPair[] } {
  const examples: DerivedExample[] = [];
  const pairs: DerivedPair[] = [];
  if (c.sourceKind !== 'feedback') return { examples, pairs };
  const lineageOf = (builder: SignalBuilder): SignalLineage => ({ builder, feedbackEventId: c.sourceId, critiqueId: c.critiqueId });
  const sfts = c.signals.filter((s): s is SftSignal => s.kind === 'sft');
  const output = c.event?.output;
  const on = (b: SignalBuilder) => builders.includes(b);

  if (on('reference'))
    for (const s of sfts)
      examples.push({
        prompt: s.prompt,
        completion: s.target,
        category: c.category ?? s.category ?? 'code',
        weight: s.weight,
        source: SOURCE_OF_BUILDER.reference,
        lineage: lineageOf('reference'),
      });

  const first = sfts[0];
  // Critique examples only from failures with a verified reference: a critique of an unreferenced failure says only that nothing can be learnt.
  if (on('critique') && first && c.event)
    examples.push({
      prompt: critiquePromptOf(c.event.prompt, c.event.output),
      completion: c.text,
      category: CRITIQUE_CATEGORY,
      weight: 1,
      source: SOURCE_OF_BUILDER.critique,
      lineage: lineageOf('critique'),
    });

  if (on('pairs') && first && output !== undefined && output !== '' && output !== first.target)
    pairs.push({
      prompt: first.prompt,
      chosen: first.target,
      rejected: output,
      category: c.category ?? first.category ?? 'code',
      weight: first.weight,
      source: SOURCE_OF_BUILDER.pairs,
      lineage: lineageOf('pairs'),
    });
  // Last, so an example or pair the reference builders made (a revision equal to the reference) keeps their name.
  if (on('revision') && c.event && c.revision?.verified && c.revision.output.trim() !== '') {
    const category = c.category ?? first?.category ?? 'general';
    const weight = first?.weight ?? 1;
    const lineage = lineageOf('revision');
    examples.push({ prompt: c.event.prompt, completion: c.revision.output, category, weight, source: SOURCE_OF_BUILDER.revision, lineage });
    if (output !== undefined && output !== '' && output !== c.revision.output)
      pairs.push({
        prompt: c.event.prompt,
        chosen: c.revision.output,
        rejected: output,
        category,
        weight,
        source: SOURCE_OF_BUILDER.revision,
        lineage,
      });
  }

  return { examples, pairs };
}
