// The teacher model's reply: the JSON schema sent as `response_format` (strict structured output) and the zod
// schema that checks what actually came back, since an OpenAI-compatible endpoint may not enforce the first.
import { z } from 'zod';
import type { ReplySchema } from './agent-request';
import { parseStructured, type ReplyChoice } from './structured-reply';

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
} satisfies ReplySchema;

/** The checked reply, or UnusableReplyError with a one-line reason. */
export function parseTeacherReply(choice: ReplyChoice | undefined): TeacherReply {
  return parseStructured(choice, teacherReplySchema);
}
