// The proposer's reply when the campaign has a recipe (trainer.recipe): each proposal carries knob values, a unified
// diff against the best recipe commit, or both, with its hypothesis. The strict JSON schema sent with the request
// (every key required, as strict mode asks; `null` for what a proposal leaves out) and the zod schema the reply is
// checked with. What a patch may change is decided by the recipe's checks (services/recipes), not here.
import { z } from 'zod';
import type { SearchSpace } from '../core/spec';
import type { ReplySchema } from './agent-request';
import { proposerJsonSchema } from './proposer-reply';

export const patchReplySchema = z.strictObject({
  proposals: z.array(
    z.strictObject({
      params: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).nullable(),
      patch: z.string().nullable(),
      hypothesis: z.string().trim().min(1),
    }),
  ),
});

export type PatchReply = z.output<typeof patchReplySchema>;

/** The knob schema of proposerJsonSchema, with `params` nullable and a nullable `patch` beside it. */
export function patchJsonSchema(space: SearchSpace): ReplySchema {
  const base = proposerJsonSchema(space);
  const proposals = (base.schema.properties as { proposals: { items: { properties: Record<string, unknown> } } }).proposals;
  const { params, hypothesis } = proposals.items.properties;
  return {
    name: 'experiment_proposals',
    strict: true,
    description:
      'The next batch of experiments: each a configuration of the search space, a unified diff against the recipe, or both, with its hypothesis.',
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['proposals'],
      properties: {
        proposals: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['params', 'patch', 'hypothesis'],
            properties: {
              params: { anyOf: [params, { type: 'null' }] },
              patch: {
                type: ['string', 'null'],
                description: 'A unified diff (git diff format) against the recipe files of the user message, or null.',
              },
              hypothesis,
            },
          },
        },
      },
    },
  };
}
