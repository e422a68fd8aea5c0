// The teacher model's reply: the JSON schema sent as `response_format` (strict structured output) and the zod
// schema that checks what actually came back, since an OpenAI-compatible endpoint may not enforce the first.
import { z } from 'zod';
import { UnusableReplyError } from './agent-errors';

export const MIN_WEIGHT = 0.5;
export const MAX_WEIGHT = 3;

export const teacherReplySchema = z.strictObject({
  critique: z.string().trim().min(1),
  target: z.string(),
  weight: z.number().min(MIN_WEIGHT).max(MAX_WEIGHT),
});

export type TeacherReply = z.output<typeof teacherReplySchema>;

/** `response_format.json_schema` of the request. Strict mode allows no bounds keywords: the range is in the text. */
export const TEACHER_REPLY_JSON_SCHEMA = {
  name: 'teacher_critique',
  strict: true,
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['critique', 'target', 'weight'],
    properties: {
      critique: { type: 'string', description: 'What the output got wrong against the reference, in plain English.' },
      target: { type: 'string', description: 'The output the model should have produced: the reference, verbatim.' },
      weight: { type: 'number', description: `The example's training weight, from ${MIN_WEIGHT} to ${MAX_WEIGHT}; 1 is ordinary.` },
    },
  },
} as const;

/** The first choice of a chat completion, as far as the teacher reads it. */
export interface ReplyChoice {
  finish_reason?: string | null;
  message: { content: string | null; refusal?: string | null };
}

/** The checked reply, or UnusableReplyError with a one-line reason. */
export function parseTeacherReply(choice: ReplyChoice | undefined): TeacherReply {
  if (!choice) throw new UnusableReplyError('no choices in the reply');
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
  const r = teacherReplySchema.safeParse(json);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || '(reply)'}: ${i.message}`).join('; ');
    throw new UnusableReplyError(`schema mismatch: ${oneLine(issues)}`);
  }
  return r.data;
}

function oneLine(s: string): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > 120 ? `${t.slice(0, 120)}…` : t;
}
