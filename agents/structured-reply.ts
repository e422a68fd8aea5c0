// A structured reply checked against its zod schema: whatever the endpoint claims to enforce, what came back is
// parsed and validated here, and an unusable reply is an UnusableReplyError with a one-line reason.
import type { z } from 'zod';
import { UnusableReplyError } from './agent-errors';
import type { ToolCall } from './agent-request';

/** The first choice of a chat completion, as far as an agent reads it (a tool call's arguments become `content`). */
export interface ReplyChoice {
  /** The completion's `choices` array was empty: there is no message to read. */
  noChoices?: true;
  finish_reason?: string | null;
  message: {
    content: string | null;
    refusal?: string | null;
    /** Calls to the request's `tools` (never the forced reply function, whose arguments are `content`). */
    toolCalls?: ToolCall[];
  };
}

/** The checked reply, or UnusableReplyError with a one-line reason. */
export function parseStructured<S extends z.ZodType>(choice: ReplyChoice | undefined, schema: S): z.output<S> {
  if (!choice || choice.noChoices) throw new UnusableReplyError('no choices in the reply');
  if (choice.message.refusal) throw new UnusableReplyError(`the model refused: ${oneLine(choice.message.refusal)}`);
  if (choice.finish_reason === 'length') throw new UnusableReplyError('the reply was cut off at the token limit');
  const content = choice.message.content;
  if (!content) throw new UnusableReplyError('the reply was empty');
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    throw new UnusableReplyError(`not JSON: ${oneLine(content)}`);
  }
  const r = schema.safeParse(json);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || '(reply)'}: ${i.message}`).join('; ');
    throw new UnusableReplyError(`schema mismatch: ${oneLine(issues)}`);
  }
  return r.data;
}

export function oneLine(s: string, max = 120): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}
