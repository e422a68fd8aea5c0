// The built-in proposer of the inner loop: the one entry the rest of Flywheel calls for the next batch of
// experiments. Pure and deterministic, so it may run in an activity or be replayed; no I/O, no Math.random.
import type { Params, SearchSpace } from '../spec';
import { createRng, mixSeed, type Rng } from './rng';
import { proposeRandom } from './random';
import { enumerateSpace, paramsKey, sampleParams, spaceSize, type Trial } from './space';
import { proposeTpe, type TpeOptions } from './tpe';

export type { Trial } from './space';
export type { TpeOptions } from './tpe';
export { validateParams, paramsKey, isNearDuplicate, fixKnobs } from './space';
export { tpeScore } from './tpe';

export type SamplerKind = 'tpe' | 'random';

export interface ProposeBatchOptions {
  /** `tpe`: the model-based sampler; `random`: uniform random search. */
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
}

/** Model proposals tried before a duplicate is replaced by a uniform draw, then uniform draws before enumerating. */
const MODEL_RETRIES = 16;
const RANDOM_RETRIES = 64;
/** Finite spaces up to this size are enumerated when draws keep hitting seen configurations. */
const MAX_ENUMERATION = 100_000;

/**
 * The next `count` configurations, a pure function of the options. A proposal never repeats a configuration
 * already in the history (any state, failed included) or earlier in the batch, unless a finite space is exhausted:
 * then a repeat is returned rather than nothing, and the caller's budget or plateau rule ends the campaign.
 * Within a TPE batch each proposal joins the history as pending before the next is drawn (the constant liar).
 * Pruned trials, and finished ones with a non-finite value, count as bad: their value is unknown or useless, but
 * they were stopped for being worse than the rest. `startupTrials` counts finished trials only.
 */
export function proposeBatch(opts: ProposeBatchOptions): Params[] {
  const { kind, space, history, count, seed, startupTrials } = opts;
  if (!Number.isInteger(count) || count < 0) throw new RangeError(`count must be a non-negative integer, got ${count}`);
  const rng = createRng(mixSeed(seed, history.length));
  const finished = history.filter((t) => t.state === 'finished' && t.value !== undefined && Number.isFinite(t.value));
  const useModel = kind === 'tpe' && finished.length > 0 && finished.length >= startupTrials;

  const trials: Trial[] = [...history];
  // Keyed on the searched knobs only, so a history row that also carries fixed params still counts as seen.
  const keyOf = (p: Params) =>
    paramsKey(
      Object.fromEntries(
        Object.keys(space)
          .filter((k) => Object.hasOwn(p, k))
          .map((k) => [k, p[k]]),
      ),
    );
  const seen = new Set(history.map((t) => keyOf(t.params)));
  const out: Params[] = [];
  const draw = (): Params => (useModel ? proposeTpe(space, trials, rng, opts.tpe) : proposeRandom(space, rng));
  for (let i = 0; i < count; i++) {
    const params = drawUnseen(space, seen, keyOf, rng, draw);
    seen.add(keyOf(params));
    trials.push({ params, state: 'pending' });
    out.push(params);
  }
  return out;
}

function drawUnseen(space: SearchSpace, seen: Set<string>, keyOf: (p: Params) => string, rng: Rng, draw: () => Params): Params {
  const isSeen = (p: Params) => seen.has(keyOf(p));
  let params = draw();
  for (let i = 1; i < MODEL_RETRIES && isSeen(params); i++) params = draw();
  // The model can concentrate on a few discrete configurations; uniform draws escape that.
  for (let i = 0; i < RANDOM_RETRIES && isSeen(params); i++) params = sampleParams(space, rng);
  if (!isSeen(params)) return params;
  if (spaceSize(space) > MAX_ENUMERATION) return params;
  const unseen = [...enumerateSpace(space)].filter((p) => !isSeen(p));
  return unseen.length > 0 ? unseen[rng.int(0, unseen.length - 1)] : params;
}
