// Samplers by name: the spec's `innerLoop.proposer` chooses one of those registered here. TPE, random and grid
// search are built in; registerSampler adds another (test/unit/sampler-plugins.test.ts registers a toy one and
// runs an inner loop with it). The registry is per process: a sampler must be registered in every process that
// parses the spec or proposes (the CLI that registers a campaign, and the workers).
import type { z } from 'zod';
import { InvalidSpecError } from '../spec-errors';
import type { Params, SearchSpace } from '../spec';
import { gridOptionsSchema, gridProblems, GridSampler } from './grid';
import { RandomSampler } from './random';
import { createRng, mixSeed } from './rng';
import type { ProposalLabel, Sampler, SamplerConfig, SamplerContext } from './sampler';
import { validateParams, type Trial } from './space';
import { TpeSampler, tpeOptionsSchema, type TpeOptions } from './tpe';

/** Makes the sampler of one batch from the spec's settings. */
export type SamplerFactory<O = Record<string, unknown>> = (config: SamplerConfig<O>) => Sampler;

export interface SamplerRegistration<O = Record<string, unknown>> {
  /**
   * Checks `innerLoop.samplerOptions` when the spec is parsed, and parses them again for the factory (absent options
   * as `{}`, so defaults belong in the schema: `z.number().default(…)`). @default none: the sampler takes no options
   */
  options?: z.ZodType<O>;
  /** Further spec problems, given the parsed options and the search space, as `path: message` lines. */
  check?: (options: O, space: SearchSpace) => string[];
}

/** A registration with its options type erased: the options reach the factory only after the schema passed them. */
interface Entry {
  factory: SamplerFactory<unknown>;
  registration: SamplerRegistration<unknown>;
}

const samplers = new Map<string, Entry>();

/** A sampler name: what `innerLoop.proposer` and the experiments' `proposer` column can hold. */
const NAME = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * Makes `name` a value of `innerLoop.proposer`. Names are lower-case (`[a-z][a-z0-9-]*`, at most 40 characters);
 * registering a name twice is an error, so a plugin cannot silently replace a built-in.
 */
export function registerSampler<O = Record<string, unknown>>(
  name: string,
  factory: SamplerFactory<O>,
  registration: SamplerRegistration<O> = {},
): void {
  if (!NAME.test(name)) throw new Error(`registerSampler: ${JSON.stringify(name)} is not a sampler name (${NAME.source})`);
  if (samplers.has(name)) throw new Error(`registerSampler: a sampler named "${name}" is already registered`);
  samplers.set(name, { factory, registration } as unknown as Entry);
}

/** Removes a registered sampler (a test's own); the built-ins cannot be removed. */
export function unregisterSampler(name: string): void {
  if (BUILT_IN.includes(name)) throw new Error(`unregisterSampler: "${name}" is built in`);
  samplers.delete(name);
}

/** The registered names, sorted. */
export function samplerNames(): string[] {
  return [...samplers.keys()].sort();
}

/**
 * Spec problems with the sampler settings, as `path: message` lines: an unknown `innerLoop.proposer`, options for
 * a sampler that takes none, options its schema refuses, or its own check's findings.
 */
export function samplerProblems(name: string, options: Record<string, unknown> | undefined, space: SearchSpace): string[] {
  const entry = samplers.get(name);
  if (!entry) return [`innerLoop.proposer: unknown sampler "${name}"; registered: ${samplerNames().join(', ')}`];
  const { options: schema, check } = entry.registration;
  if (!schema) return options === undefined ? [] : [`innerLoop.samplerOptions: the ${name} sampler takes no options`];
  // Absent options are checked as {}: the options the factory will get.
  const parsed = schema.safeParse(options ?? {});
  if (!parsed.success)
    return parsed.error.issues.map((i) => `${['innerLoop', 'samplerOptions', ...i.path.map(String)].join('.')}: ${i.message}`);
  return check ? check(parsed.data, space) : [];
}

/** The registered sampler `name`, made for one batch. An unknown name is the spec's error. */
export function createSampler(name: string, config: SamplerConfig<Record<string, unknown> | undefined>): Sampler {
  const entry = samplers.get(name);
  if (!entry) throw new InvalidSpecError([`innerLoop.proposer: unknown sampler "${name}"; registered: ${samplerNames().join(', ')}`]);
  // Parsed again here, so a schema's defaults reach the factory (the spec keeps the options as written).
  const { options: schema } = entry.registration;
  return entry.factory({ ...config, options: schema ? schema.parse(config.options ?? {}) : (config.options ?? {}) });
}

export interface ProposeWithOptions {
  /** The campaign's `searchSpace` (pinned knobs fixed); every proposal must pass `validateParams` against it. */
  space: SearchSpace;
  /** Every trial so far, oldest first, finished or not. */
  history: readonly Trial[];
  count: number;
  /** The campaign's seed; mixed with the history's length, so successive batches differ but replay identically. */
  seed: number;
}

/**
 * One batch from `sampler`, with each proposal's label. The sampler's output is checked: the count asked for, and
 * every configuration valid for the space (a plugin's mistake is an error here, not a run with a bad config).
 */
export function proposeWith(sampler: Sampler, name: string, opts: ProposeWithOptions): { params: Params[]; labels: ProposalLabel[] } {
  const { space, history, count, seed } = opts;
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
  const ctx: SamplerContext = { space, history, count, rng: createRng(mixSeed(seed, history.length)) };
  const params = sampler.propose(ctx);
  if (params.length !== count) throw new Error(`sampler "${name}" proposed ${params.length} configurations, ${count} were asked for`);
  params.forEach((p, i) => {
    const problems = validateParams(space, p);
    if (problems.length > 0)
      throw new Error(`sampler "${name}" proposed an invalid configuration (${i + 1} of ${count}): ${problems.join('; ')}`);
  });
  const labels = params.map((_, i) => sampler.describe?.(ctx, i) ?? { proposer: name, hypothesis: `${name} sampler` });
  return { params, labels };
}

registerSampler<TpeOptions>('tpe', ({ startupTrials, options }) => new TpeSampler(startupTrials, options), {
  options: tpeOptionsSchema,
});
registerSampler('random', () => new RandomSampler());
registerSampler('grid', ({ options }) => new GridSampler(options), {
  options: gridOptionsSchema,
  check: (o, space) => gridProblems(space, o),
});
const BUILT_IN = samplerNames();
