// The proposer's reply when the campaign has a recipe (trainer.recipe): each proposal carries knob values, a unified
// diff against the best recipe commit, or both, with its hypothesis. The strict JSON schema sent with the request
// (every key required, as strict mode asks; `null` for what a proposal leaves out) and the zod schema the reply is
// checked with. What a patch may change is decided by the recipe's checks (services/recipes), not here.
import { z } from 'zod';
import type { SearchSpace } from '../core/spec';
import type { ReplySchema } from './agent-request';
import { HYPOTHESIS_JSON_SCHEMA, paramsJsonSchema, proposalsJsonSchema } from './proposer-reply';

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

/** The envelope of proposerJsonSchema, with `params` nullable and a nullable `patch` beside it. */
export function patchJsonSchema(space: SearchSpace): ReplySchema {
  return proposalsJsonSchema(
    'The next batch of experiments: each a configuration of the search space, a unified diff against the recipe, or both, with its hypothesis.',
    {
      params: { anyOf: [paramsJsonSchema(space), { type: 'null' }] },
      patch: {
        type: ['string', 'null'],
        description: 'A unified diff (git diff format) against the recipe files of the user message, or null.',
      },
      hypothesis: HYPOTHESIS_JSON_SCHEMA,
    },
  );
}
