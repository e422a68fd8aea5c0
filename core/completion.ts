// A completion request to the production model (`POST /v1/complete`) and its answer: the read side of the outer
// loop, whose outputs users judge and send back as feedback. Validated here, like feedback events.
import { z } from 'zod';
import { boundedText, FEEDBACK_LIMITS, feedbackIssues } from './feedback';

/** The most bytes one request may ask for: greedy decoding is one forward pass per byte, on the server's CPU. */
export const MAX_COMPLETION_BYTES = 4096;
/** Bytes completed when the request does not say. */
export const DEFAULT_COMPLETION_BYTES = 64;

export const completionRequestSchema = z.strictObject({
  /** The campaign whose production (promoted) checkpoint answers. */
  campaignId: boundedText(FEEDBACK_LIMITS.name, 1),
  /** The text to continue; capped like a feedback event's prompt, so the pair can always be sent back as feedback. */
  prompt: boundedText(FEEDBACK_LIMITS.text),
  /** Bytes to generate at most (fewer when the model predicts no printable byte). @default 64 */
  maxBytes: z
    .number()
    .int(`must be an integer from 0 to ${MAX_COMPLETION_BYTES}`)
    .min(0, `must be an integer from 0 to ${MAX_COMPLETION_BYTES}`)
    .max(MAX_COMPLETION_BYTES, `must be an integer from 0 to ${MAX_COMPLETION_BYTES}`)
    .default(DEFAULT_COMPLETION_BYTES),
});

export type CompletionRequest = z.output<typeof completionRequestSchema>;

export interface CompletionReply {
  completion: string;
  /** The checkpoint id that produced `completion`: a feedback event's `modelVersion`. */
  modelVersion: string;
}

/** Validates a request body; returns `path: message` problem lines instead of throwing. */
export function checkCompletionRequest(
  raw: unknown,
): { request: CompletionRequest; problems?: undefined } | { request?: undefined; problems: string[] } {
  const r = completionRequestSchema.safeParse(raw);
  return r.success ? { request: r.data } : { problems: feedbackIssues(r.error.issues) };
}
