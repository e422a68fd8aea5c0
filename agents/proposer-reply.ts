// The proposer's reply: a strict JSON schema built from the campaign's search space (sent with the request), and
// the checks of what came back (zod for the shape, validateParams for the bounds, the history for duplicates),
// since an endpoint may not enforce the schema and the reply may have been steered by text in its context.
import { z } from 'zod';
import { paramsKey, validateParams } from '../core/sampler';
import type { Params, SearchSpace } from '../core/spec';
import type { ReplySchema } from './agent-request';

export const proposerReplySchema = z.strictObject({
  proposals: z.array(
    z.strictObject({
      params: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
      hypothesis: z.string().trim().min(1),
    }),
  ),
});

export type ProposerReply = z.output<typeof proposerReplySchema>;

/** `params` as the request's schema gives it: exactly the space's knobs, each with its type (bounds are in the prompt). */
export function paramsJsonSchema(space: SearchSpace): Record<string, unknown> {
  const knob = (name: string): Record<string, unknown> => {
    const def = space[name];
    if (def.type === 'categorical') return { enum: def.choices };
    return {
      type: def.type === 'int' ? 'integer' : 'number',
      description: `from ${def.low} to ${def.high}${def.log ? ' (log scale)' : ''}`,
    };
  };
  const names = Object.keys(space);
  return {
    type: 'object',
    additionalProperties: false,
    required: names,
    properties: Object.fromEntries(names.map((n) => [n, knob(n)])),
  };
}

export const HYPOTHESIS_JSON_SCHEMA = { type: 'string', description: 'What this experiment tests and why, in plain English.' };

/**
 * The envelope every proposer reply shares, `{proposals: [item, …]}`, strict: no other key anywhere, and every key
 * of an item required (strict mode asks for that; an item says "none" with `null`), so `required` is derived here.
 */
export function proposalsJsonSchema(description: string, item: Record<string, Record<string, unknown>>): ReplySchema {
  return {
    name: 'experiment_proposals',
    strict: true,
    description,
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['proposals'],
      properties: {
        proposals: {
          type: 'array',
          items: { type: 'object', additionalProperties: false, required: Object.keys(item), properties: item },
        },
      },
    },
  };
}

/** The request's schema of a campaign without a recipe: knob values and a hypothesis. */
export function proposerJsonSchema(space: SearchSpace): ReplySchema {
  return proposalsJsonSchema('The next batch of experiments, each a configuration of the search space with its hypothesis.', {
    params: paramsJsonSchema(space),
    hypothesis: HYPOTHESIS_JSON_SCHEMA,
  });
}

export interface CheckedProposals {
  accepted: { params: Params; hypothesis: string }[];
  /** One line per rejected proposal: `proposals.2: lr: 5 is outside [0.0003, 0.03]`. */
  rejected: string[];
}

/**
 * Each proposal against the space (unknown, missing, out-of-range knobs) and against `seen` (configurations already
 * run or proposed, keyed on the space's knobs) and the proposals accepted before it.
 */
export function checkProposals(reply: ProposerReply, space: SearchSpace, seen: ReadonlySet<string>, offset = 0): CheckedProposals {
  const keys = new Set(seen);
  const out: CheckedProposals = { accepted: [], rejected: [] };
  reply.proposals.forEach((p, i) => {
    const where = `proposals.${i + offset}`;
    const problems = validateParams(space, p.params);
    if (problems.length > 0) return void out.rejected.push(`${where}: ${problems.join('; ')}`);
    const key = spaceKey(space, p.params);
    if (keys.has(key)) return void out.rejected.push(`${where}: duplicates an experiment already run or proposed (${paramsKey(p.params)})`);
    keys.add(key);
    out.accepted.push({ params: p.params, hypothesis: p.hypothesis });
  });
  return out;
}

/** A configuration's identity on the space's knobs only (a history row may carry fixed params too). */
export function spaceKey(space: SearchSpace, params: Params): string {
  return paramsKey(
    Object.fromEntries(
      Object.keys(space)
        .filter((k) => Object.hasOwn(params, k))
        .map((k) => [k, params[k]]),
    ),
  );
}
