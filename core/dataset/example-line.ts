// One training example as a user writes it (a line of the JSONL file `flywheel dataset add` reads) and as a trainer
// reads it (a line of a dataset version's `train.jsonl`): a prompt and its completion, or chat messages. The text
// the overlap and contamination checks compare (`exampleContent`) and the one chat rendering every trainer without a
// chat template of its own uses (`promptAndCompletion`) are defined here, once.
import { z } from 'zod';

/**
 * Text PostgreSQL can store as it is: no NUL character and no unpaired UTF-16 surrogate (JSON can spell both, as
 * `\u0000` and a lone `\ud800`; a `text` or `jsonb` column refuses them).
 */
const STORABLE = /^[^\u0000\p{Cs}]*$/u;
const text = () => z.string().regex(STORABLE, 'must not contain NUL (\\u0000) or unpaired surrogate characters');

export const messageSchema = z.strictObject({
  role: z.enum(['system', 'user', 'assistant']),
  content: text(),
});
export type Message = z.output<typeof messageSchema>;

/** A category as a dataset line and a feedback event (core/feedback.ts) name it. */
export const categorySchema = z
  .string()
  .min(1, 'must not be empty')
  .max(120, 'must be at most 120 characters')
  .regex(/^[\w.:/-]+$/, 'letters, digits and ._:/- only');
const weightSchema = z.number().finite('must be a finite number').min(0, 'must be >= 0');

const promptCompletionLine = z.strictObject({
  prompt: text(),
  completion: text().min(1, 'must not be empty (the loss is on the completion)'),
  /** Groups examples in reports and per-category loss weights. @default "general" */
  category: categorySchema.default('general'),
  /** How often the example is drawn relative to the others. @default 1 */
  weight: weightSchema.default(1),
});

const messagesLine = z.strictObject({
  messages: z
    .array(messageSchema)
    .min(1, 'must hold at least one message')
    .refine((m) => m[m.length - 1]?.role === 'assistant', "the last message must be the assistant's (the loss is on it)"),
  /** @default "general" */
  category: categorySchema.default('general'),
  /** @default 1 */
  weight: weightSchema.default(1),
});

/** A line of a dataset file: `{prompt, completion, category?, weight?}` or `{messages, category?, weight?}`. */
export const exampleLineSchema = z.union([promptCompletionLine, messagesLine]);
export type ExampleLine = z.output<typeof exampleLineSchema>;

/** The longest line read, in bytes: a longer one is refused by name, not allowed to exhaust the reader's memory. */
export const MAX_EXAMPLE_LINE_BYTES = 1 << 20;

/**
 * Checks one parsed line. Returns the example, or `field: problem` strings (the first problem of each field, so a
 * line written in neither shape says what each shape lacked).
 */
export function checkExampleLine(
  raw: unknown,
): { example: ExampleLine; problems?: undefined } | { example?: undefined; problems: string[] } {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { problems: ['(line): must be a JSON object'] };
  const shape = 'messages' in raw ? messagesLine : promptCompletionLine;
  const r = shape.safeParse(raw);
  if (r.success) return { example: r.data };
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const issue of r.error.issues) {
    const field = issue.path.join('.') || '(line)';
    if (seen.has(field)) continue;
    seen.add(field);
    problems.push(`${field}: ${issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}` : issue.message}`);
  }
  return { problems };
}

/**
 * The chat rendering of the built-in trainers (and of any trainer that reads `prompt`/`completion` only): every message
 * but the last as `<role>: <content>\n`, then `assistant: `; the last (the assistant's) message is the completion.
 */
export function promptAndCompletion(e: ExampleLine): { prompt: string; completion: string } {
  if ('prompt' in e) return { prompt: e.prompt, completion: e.completion };
  const head = e.messages.slice(0, -1).map((m) => `${m.role}: ${m.content}\n`);
  return { prompt: head.join('') + 'assistant: ', completion: e.messages[e.messages.length - 1].content };
}

/** The text the overlap and contamination checks compare with eval items: the prompt followed by the completion. */
export function exampleContent(e: ExampleLine): string {
  const { prompt, completion } = promptAndCompletion(e);
  return prompt + completion;
}

/**
 * A line of a dataset version's `train.jsonl`, as every trainer reads it: the example's own fields, its category and
 * its effective weight (its own weight × the version's mix weight for its source × the loss weight of its category).
 * `weight` is per example: a trainer draws examples in proportion to it and averages each drawn example's loss over
 * its own targets, so its share of the loss does not grow with its length; 0 keeps an example in the version but out of training.
 */
export type TrainExample = ExampleLine & { source: string };

export { TRAIN_EXAMPLES_FILE } from '../contract-files';

/**
 * The example with its keys in one fixed order (`prompt, completion, category, weight` or `messages, category,
 * weight`; each message `role, content`) and nothing else: what a version's content hash is taken over, and the
 * start of its `train.jsonl` line, so the same example is always the same bytes.
 */
export function canonicalExample(e: ExampleLine): ExampleLine {
  if ('prompt' in e) return { prompt: e.prompt, completion: e.completion, category: e.category, weight: e.weight };
  return { messages: e.messages.map((m) => ({ role: m.role, content: m.content })), category: e.category, weight: e.weight };
}

/** One line of `train.jsonl` (no newline): the canonical example, then `source`. */
export function trainExampleLine(e: TrainExample): string {
  return JSON.stringify({ ...canonicalExample(e), source: e.source });
}

/** The outer loop's signal builders (spec `outerLoop.signals`; core/dataset/signal-builders.ts). */
export const SIGNAL_BUILDERS = ['reference', 'revision', 'critique', 'pairs'] as const;
export type SignalBuilder = (typeof SIGNAL_BUILDERS)[number];

/**
 * Where a derived example or pair came from (the outer loop's signal builders): the feedback event or eval item it
 * answers, the critique it was built from, and the builder (`reference`, `revision`, `critique`, `pairs`).
 */
export interface SignalLineage {
  builder: SignalBuilder;
  feedbackEventId?: string;
  evalItemId?: string;
  critiqueId?: string;
}

/**
 * A line of a dataset version's `pairs.jsonl`: a preference pair for DPO. `rejected` is always a real production
 * output; `chosen` a verified reference or a verified revision. `weight` is effective, as in `train.jsonl`.
 */
export interface TrainPair {
  prompt: string;
  chosen: string;
  rejected: string;
  category: string;
  weight: number;
  source: string;
  lineage?: SignalLineage;
}

export { TRAIN_PAIRS_FILE } from '../contract-files';

/** One line of `pairs.jsonl` (no newline), keys in a fixed order. */
export function trainPairLine(p: TrainPair): string {
  const { prompt, chosen, rejected, category, weight, source, lineage } = p;
  return JSON.stringify(
    lineage ? { prompt, chosen, rejected, category, weight, source, lineage } : { prompt, chosen, rejected, category, weight, source },
  );
}
