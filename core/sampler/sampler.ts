// What a sampler is (Optuna's BaseSampler, in batches): given the search space and every trial so far, the next
// configurations to run. TPE, random and grid search implement it (tpe.ts, random.ts, grid.ts); the registry
// (registry.ts) chooses one by the spec's `innerLoop.proposer`. A sampler runs in an activity that may be retried,
// so it must be a pure function of its context: no I/O, no Date, no Math.random, only `ctx.rng`.
import type { Params, SearchSpace } from '../spec';
import type { Rng } from './rng';
import { enumerateSpace, paramsKey, sampleParams, spaceSize, type Trial } from './space';

/** Everything a sampler may read when it proposes a batch. */
export interface SamplerContext {
  /** The campaign's `searchSpace`, with any pinned knob fixed (fixKnobs); every proposal must be valid for it. */
  readonly space: SearchSpace;
  /**
   * Every trial so far, oldest first, finished or not: its params and, when finished, its objective (lower is
   * better; a max metric is negated). A trial's params may carry knobs outside the space (fixed ones).
   */
  readonly history: readonly Trial[];
  /** Configurations to propose. */
  readonly count: number;
  /** Seeded by the campaign's seed and the history's length: successive batches differ, a retry replays exactly. */
  readonly rng: Rng;
}

/** How a proposal is recorded: the experiment's `proposer` column and the start of its hypothesis. */
export interface ProposalLabel {
  proposer: string;
  hypothesis: string;
}

export interface Sampler {
  /** Exactly `ctx.count` configurations, each valid for `ctx.space` (the caller checks both). */
  propose(ctx: SamplerContext): Params[];
  /**
   * The label of proposal `index` of the batch `ctx` produced (called after `propose`; must not draw from `ctx.rng`).
   * @default proposer: the sampler's registered name, hypothesis: `<name> sampler`
   */
  describe?(ctx: SamplerContext, index: number): ProposalLabel;
}

/** What the spec tells a sampler when it is created for one batch. */
export interface SamplerConfig<O = Record<string, unknown>> {
  /** `innerLoop.startupTrials`: finished trials a model-based sampler waits for, drawing at random until then. */
  startupTrials: number;
  /** `innerLoop.samplerOptions`, checked against the sampler's options schema when the spec was parsed. */
  options: O;
}

/** Model proposals tried before a duplicate is replaced by a uniform draw, then uniform draws before enumerating. */
const MODEL_RETRIES = 16;
const RANDOM_RETRIES = 64;
/** Finite spaces up to this size are enumerated when draws keep hitting seen configurations. */
const MAX_ENUMERATION = 100_000;

/** The identity of a configuration as far as the space goes: keyed on the searched knobs only. */
export function searchedKey(space: SearchSpace): (p: Params) => string {
  return (p) =>
    paramsKey(
      Object.fromEntries(
        Object.keys(space)
          .filter((k) => Object.hasOwn(p, k))
          .map((k) => [k, p[k]]),
      ),
    );
}

/**
 * A batch from a sampler that draws one configuration at a time (TPE, random): `draw(trials)` sees the history plus
 * this batch's earlier proposals as pending trials (the constant liar). A proposal never repeats a configuration
 * already in the history (any state, failed included) or earlier in the batch, unless a finite space is exhausted:
 * then a repeat is returned rather than nothing, and the caller's budget or plateau rule ends the campaign.
 */
export function distinctBatch(ctx: SamplerContext, draw: (trials: readonly Trial[]) => Params): Params[] {
  const { space, history, count, rng } = ctx;
  const trials: Trial[] = [...history];
  const keyOf = searchedKey(space);
  const seen = new Set(history.map((t) => keyOf(t.params)));
  const out: Params[] = [];
  for (let i = 0; i < count; i++) {
    const params = drawUnseen(space, seen, keyOf, rng, () => draw(trials));
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
