// The built-in proposer of the inner loop: the samplers behind one interface (sampler.ts), chosen by name from a
// registry (registry.ts). Pure and deterministic, so they may run in an activity or be replayed; no I/O, no
// Math.random.
import type { Params, SearchSpace } from '../spec';
import { createSampler, proposeWith } from './registry';
import type { Trial } from './space';
import type { TpeOptions } from './tpe';

export type { Trial } from './space';
export type { TpeOptions } from './tpe';
export type { ProposalLabel, Sampler, SamplerConfig, SamplerContext } from './sampler';
export { distinctBatch } from './sampler';
export { validateParams, paramsKey, isNearDuplicate, fixKnobs } from './space';
export { tpeScore } from './tpe';
export {
  createSampler,
  proposeWith,
  registerSampler,
  samplerNames,
  samplerProblems,
  unregisterSampler,
  type SamplerFactory,
  type SamplerRegistration,
} from './registry';

/** A registered sampler's name: `tpe`, `random`, `grid`, or one added with registerSampler. */
export type SamplerKind = string;

export interface ProposeBatchOptions {
  /** `tpe`: the model-based sampler; `random`: uniform random search; `grid`: grid search; or a registered name. */
  kind: SamplerKind;
  /** The campaign's `searchSpace`; every proposal passes `validateParams` against it. */
  space: SearchSpace;
  /** Every trial so far, oldest first, finished or not; pending ones steer a TPE batch away from themselves. */
  history: readonly Trial[];
  /** Configurations to propose. */
  count: number;
  /** The campaign's seed; mixed with the history's length, so successive batches differ but replay identically. */
  seed: number;
  /** TPE proposes at random until this many finished trials (with a finite value) exist. */
  startupTrials: number;
  /** Model tuning for `tpe`. @default Optuna's: 24 candidates, prior weight 1, γ(n) = min(⌈0.1 n⌉, 25), independent knobs */
  tpe?: TpeOptions;
  /** The sampler's options (`innerLoop.samplerOptions`) for any other kind. @default none */
  options?: Record<string, unknown>;
}

/**
 * The next `count` configurations from the sampler `kind`, a pure function of the options. The built-in samplers
 * never repeat a configuration already in the history (any state, failed included) or earlier in the batch,
 * unless a finite space is exhausted: then a repeat is returned rather than nothing, and the caller's budget or
 * plateau rule ends the campaign.
 */
export function proposeBatch(opts: ProposeBatchOptions): Params[] {
  const { kind, startupTrials } = opts;
  const options = kind === 'tpe' ? (opts.tpe as Record<string, unknown> | undefined) : opts.options;
  return proposeWith(createSampler(kind, { startupTrials, options }), kind, opts).params;
}
