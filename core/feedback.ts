// One user signal on a production model's output, as a client sends it: the outer loop's raw input.
// `checkFeedback` is the one place an event is validated (HTTP API and `flywheel feedback import` alike).
import { z } from 'zod';
import { NonRetryableError } from './errors';
import { categorySchema } from './dataset/example-line';

/** Per-field caps in UTF-8 bytes: one event stays small enough that a 1000-event batch fits in a request. */
export const FEEDBACK_LIMITS = { text: 64 * 1024, comment: 16 * 1024, name: 200 } as const;

/** UTF-8 length without allocating (core stays free of Node built-ins, so workflows may import its types). */
function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? (i++, 4) : 3;
  }
  return n;
}

/**
 * Text PostgreSQL stores exactly as sent: no NUL (a `text` column refuses it) and no lone surrogate (the driver
 * would store U+FFFD, so a retry of the same event would then look like a conflict).
 */
export function boundedText(maxBytes: number, min = 0) {
  return z
    .string()
    .min(min, 'must not be empty')
    .refine(
      (s) => s.length <= maxBytes && (s.length * 3 <= maxBytes || utf8Bytes(s) <= maxBytes),
      `must be at most ${maxBytes} bytes (UTF-8)`,
    )
    .refine((s) => !/\u0000|\p{Cs}/u.test(s), 'must be valid Unicode text without NUL characters');
}

export const FEEDBACK_KINDS = ['accept', 'reject', 'edit', 'rating'] as const;

export const feedbackEventSchema = z
  .strictObject({
    /**
     * The client's idempotency key: sending the same event again (a retry) stores nothing more; the same id with
     * other content is refused as a conflict. 1–200 characters of `A-Z a-z 0-9 . _ : -`.
     */
    id: z.string().regex(/^[A-Za-z0-9._:-]{1,200}$/, 'must be 1-200 characters of A-Z a-z 0-9 . _ : -'),
    /** The campaign whose production model produced the output (the spec name). */
    campaignId: boundedText(FEEDBACK_LIMITS.name, 1),
    /** `accept` / `reject`: the output was taken or discarded; `edit`: the user fixed it (see `correction`); `rating`: 1–5 stars. */
    kind: z.enum(FEEDBACK_KINDS),
    /** The checkpoint or deployment tag that produced `output`, so feedback on an old model is not credited to a new one. */
    modelVersion: boundedText(FEEDBACK_LIMITS.name, 1),
    /** The prompt the model saw. */
    prompt: boundedText(FEEDBACK_LIMITS.text),
    /** What the model returned. */
    output: boundedText(FEEDBACK_LIMITS.text),
    /** The user's fixed version of `output`: required when `kind` is `edit`, refused otherwise. */
    correction: boundedText(FEEDBACK_LIMITS.text).optional(),
    /** Stars, an integer from 1 to 5: required when `kind` is `rating`; optional beside any other kind. */
    rating: z
      .number()
      .int('must be an integer from 1 to 5')
      .min(1, 'must be an integer from 1 to 5')
      .max(5, 'must be an integer from 1 to 5')
      .optional(),
    /** Free text from the user, kept for the teacher's critiques. */
    comment: boundedText(FEEDBACK_LIMITS.comment).optional(),
    /**
     * The loss-weight category of the prompt, as the task's dataset names its categories (`letters, digits and
     * ._:/-`). Absent: the outer loop takes the category of the prompt's nearest dataset example, else the task
     * teacher's, else the one most of the dataset's examples carry (core/dataset/feedback-shape.ts).
     */
    category: categorySchema.optional(),
  })
  .superRefine((e, ctx) => {
    if (e.kind === 'edit' && e.correction === undefined)
      ctx.addIssue({ code: 'custom', path: ['correction'], message: 'required when kind is "edit"' });
    if (e.kind !== 'edit' && e.correction !== undefined)
      ctx.addIssue({ code: 'custom', path: ['correction'], message: 'only allowed when kind is "edit"' });
    if (e.kind === 'rating' && e.rating === undefined)
      ctx.addIssue({ code: 'custom', path: ['rating'], message: 'required when kind is "rating"' });
  });

export type FeedbackEvent = z.infer<typeof feedbackEventSchema>;

export class InvalidFeedbackError extends NonRetryableError {
  /** One `path: message` line per problem. */
  constructor(
    readonly problems: string[],
    where = 'feedback event',
  ) {
    super(`${where} is invalid:\n${problems.join('\n')}`);
  }
}

/** `path: message` lines, `prefix` first (`events.3.rating`); an unknown field is named in the path, not the message. */
export function feedbackIssues(issues: readonly z.core.$ZodIssue[], prefix: ReadonlyArray<string | number> = []): string[] {
  return issues.flatMap((i) => {
    const at = (p: ReadonlyArray<PropertyKey>) => [...prefix, ...p].map(String).join('.') || '(root)';
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => `${at([...i.path, k])}: unknown field`);
    return [`${at(i.path)}: ${i.message}`];
  });
}

/** Validates one raw event; returns the problem lines instead of throwing, so a batch can report all of them. */
export function checkFeedback(
  raw: unknown,
  prefix: ReadonlyArray<string | number> = [],
): { event: FeedbackEvent; problems?: undefined } | { event?: undefined; problems: string[] } {
  const r = feedbackEventSchema.safeParse(raw);
  return r.success ? { event: r.data } : { problems: feedbackIssues(r.error.issues, prefix) };
}

/** Validates one raw event; throws InvalidFeedbackError. */
export function parseFeedback(raw: unknown): FeedbackEvent {
  const r = checkFeedback(raw);
  if (r.problems) throw new InvalidFeedbackError(r.problems);
  return r.event;
}
