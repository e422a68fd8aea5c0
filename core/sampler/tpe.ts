// TPE, the built-in proposer's model (Bergstra et al. 2011; estimator and bandwidth rules follow Optuna's
// TPESampler): split the history into good and bad trials, fit a Parzen estimator to each group, draw candidates
// from the good one, l(x), and keep the one that maximises l(x)/g(x).
import { z } from 'zod';
import type { ParamDef, ParamValue, Params, SearchSpace } from '../spec';
import { proposeRandom } from './random';
import type { Rng } from './rng';
import { distinctBatch, type ProposalLabel, type Sampler, type SamplerContext } from './sampler';
import { checkParam, type Trial } from './space';
import { erfc } from '../erfc';

// Bound once: a global lookup (Math, Infinity, Array) is slow inside jest's vm sandbox, and these run in the
// scoring loop.
const { exp, log, min, max, round } = Math;
const NEG_INF = -Infinity;
const LOG_SQRT_2PI = 0.5 * log(2 * Math.PI);
const SQRT1_2 = Math.SQRT1_2;

/** Tuning of the TPE model; the defaults are Optuna's. */
export interface TpeOptions {
  /** Candidates drawn from l(x); the one with the largest l(x)/g(x) is kept. @default 24 */
  candidates?: number;
  /** Weight of the prior kernel (uniform over choices, one range-wide Gaussian for numbers) in both estimators. @default 1 */
  priorWeight?: number;
  /**
   * How many of `n` trials form the good group. Optuna's `min(ceil(0.1 n), 25)`: greedy enough to home in within a
   * 30-trial campaign, and capped so a long campaign keeps a broad good set.
   * @default (n) => Math.min(Math.ceil(0.1 * n), 25)
   */
  gamma?: (n: number) => number;
  /**
   * One kernel per trial across all knobs (Optuna's `multivariate=True`, Falkner et al. 2018), so the model can keep
   * the knobs' interactions. Off by default, as in Optuna: on the built-in task the independent estimators found
   * better configurations within 16 trials and tied at 32 (bench/sample-efficiency.ts); multivariate did better on
   * the separable synthetic objectives of test/unit/sampler.test.ts.
   * @default false
   */
  multivariate?: boolean;
  /**
   * Numeric kernel widths in multivariate mode. `neighbour`: Optuna's univariate rule per knob (the larger gap to a
   * neighbouring observation), wide while trials are few, so the first model-based batches still explore;
   * `scott`: Optuna's multivariate rule, 0.2 · n^(-1/(d+4)) of the range for every kernel, which exploited the best
   * start-up trial too early on the built-in task.
   * @default "neighbour" (Optuna uses `scott` here)
   */
  bandwidth?: 'neighbour' | 'scott';
}

const withDefaults = (o: TpeOptions): Required<TpeOptions> => ({
  candidates: o.candidates ?? 24,
  priorWeight: o.priorWeight ?? 1,
  gamma: o.gamma ?? ((n) => Math.min(Math.ceil(0.1 * n), 25)),
  multivariate: o.multivariate ?? false,
  bandwidth: o.bandwidth ?? 'neighbour',
});

/**
 * One TPE proposal from `trials` (needs at least one finished trial with a finite value, else the caller samples
 * at random). The good group is the best γ(n) finished trials, n counting every trial that informs the model.
 * Everything else is bad: the other finished trials, pruned trials and non-finite values (stopped or diverged, so
 * worse than any good one though their value is unknown), and pending trials, the "constant liar" that keeps a batch
 * from piling onto one point. Failed trials say nothing about the objective and are ignored.
 */
export function proposeTpe(space: SearchSpace, trials: readonly Trial[], rng: Rng, options: TpeOptions = {}): Params {
  const opts = withDefaults(options);
  const { good, bad } = splitTrials(trials, opts.gamma);
  const names = Object.keys(space);
  if (opts.multivariate) {
    // A one-knob space is the univariate case, where the neighbour-gap bandwidths are Optuna's rule.
    const bandwidth = names.length > 1 ? opts.bandwidth : 'neighbour';
    const l = fitJoint(space, good, opts.priorWeight, bandwidth);
    const g = fitJoint(space, bad, opts.priorWeight, bandwidth);
    const x = argmaxRatio(
      opts.candidates,
      () => drawJoint(l, rng),
      (c) => logJoint(l, c) - logJoint(g, c),
    );
    return Object.fromEntries(names.map((n, d) => [n, toParamValue(space[n], x[d])]));
  }
  const params: Params = {};
  for (const name of names) {
    const def = space[name];
    const l = fitJoint({ [name]: def }, good, opts.priorWeight, 'neighbour');
    const g = fitJoint({ [name]: def }, bad, opts.priorWeight, 'neighbour');
    const x = argmaxRatio(
      opts.candidates,
      () => drawJoint(l, rng),
      (c) => logJoint(l, c) - logJoint(g, c),
    );
    params[name] = toParamValue(def, x[0]);
  }
  return params;
}

/** Good and bad trials, each in trial order (oldest first) so the age weights apply. */
export function splitTrials(trials: readonly Trial[], gamma: (n: number) => number): { good: Trial[]; bad: Trial[] } {
  const scored: { i: number; value: number }[] = [];
  let considered = 0;
  trials.forEach((t, i) => {
    if (t.state === 'failed') return;
    considered++;
    if (t.state === 'finished' && t.value !== undefined && Number.isFinite(t.value)) scored.push({ i, value: t.value });
  });
  const nGood = Math.max(0, Math.min(gamma(considered), scored.length));
  // Ties keep trial order, so the split does not depend on the sort's stability.
  scored.sort((a, b) => a.value - b.value || a.i - b.i);
  const goodIdx = new Set(scored.slice(0, nGood).map((s) => s.i));
  const good: Trial[] = [];
  const bad: Trial[] = [];
  trials.forEach((t, i) => {
    if (goodIdx.has(i)) good.push(t);
    else if (t.state !== 'failed') bad.push(t);
  });
  return { good, bad };
}

function argmaxRatio<T>(n: number, draw: () => T, score: (c: T) => number): T {
  let best = draw();
  let bestScore = score(best);
  for (let i = 1; i < n; i++) {
    const c = draw();
    const s = score(c);
    if (s > bestScore) [best, bestScore] = [c, s];
  }
  return best;
}

// ---------- the Parzen estimator: kernels over trials, one column per knob ----------

type NumericDef = ParamDef & { type: 'float' | 'int' };
/** A numeric knob on its internal scale (log when `log`; ints widened by half a step so each value owns a bin). */
interface NumericColumn {
  kind: 'numeric';
  def: NumericDef;
  low: number;
  high: number;
  mus: number[];
  sigmas: number[];
  /** Per kernel, log of its mass inside the bounds (the truncation), and that plus log σ√2π (a density's normaliser). */
  logMasses: number[];
  logNorms: number[];
}
/** A categorical knob: per kernel, a distribution over choice indices (and its logs, for scoring). */
interface CategoricalColumn {
  kind: 'categorical';
  probs: number[][];
  logProbs: number[][];
}
/** Kernel k is the product over columns of each column's k-th component; the last kernel is the prior. */
interface Estimator {
  logWeights: number[];
  weights: number[];
  columns: (NumericColumn | CategoricalColumn)[];
}

/** Optuna's age weights: equal up to 25 trials, then older trials fade linearly, so the model tracks recent ones. */
function ageWeights(n: number): number[] {
  if (n < 25) return Array<number>(n).fill(1);
  const ramp = n - 25;
  return Array.from({ length: n }, (_, i) => (i < ramp ? 1 / n + ((1 - 1 / n) * i) / max(1, ramp - 1) : 1));
}

const internal = (def: NumericDef, v: number): number => (def.log ? log(v) : v);

/**
 * A kernel per trial with a valid value for every knob of `space` (the space may have changed since others ran),
 * plus the prior kernel.
 */
function fitJoint(space: SearchSpace, group: readonly Trial[], priorWeight: number, bandwidth: 'scott' | 'neighbour'): Estimator {
  const names = Object.keys(space);
  const obs = group.filter((t) => names.every((n) => t.params[n] !== undefined && !checkParam(space[n], t.params[n])));
  const n = obs.length;
  const w = [...ageWeights(n), priorWeight];
  const total = w.reduce((a, b) => a + b, 0);
  const columns = names.map((name) => {
    const def = space[name];
    if (def.type === 'categorical') {
      // Each kernel peaks at its trial's choice, smoothed by priorWeight spread over the kernels (Optuna's rule).
      const smooth = priorWeight / (n + 1);
      const probs = obs.map((t) => {
        const row = def.choices.map(() => smooth);
        row[def.choices.indexOf(t.params[name])] += 1;
        return row.map((p) => p / (1 + smooth * def.choices.length));
      });
      probs.push(def.choices.map(() => 1 / def.choices.length));
      return { kind: 'categorical' as const, probs, logProbs: probs.map((row) => row.map(log)) };
    }
    const half = def.type === 'int' ? 0.5 : 0;
    const [low, high] = [internal(def, def.low - half), internal(def, def.high + half)];
    const mus = obs.map((t) => internal(def, t.params[name] as number));
    const obsSigmas = bandwidth === 'scott' ? scottSigmas(n, names.length, high - low) : neighbourSigmas(mus, low, high);
    const allMus = [...mus, 0.5 * (low + high)];
    const sigmas = [...obsSigmas, high - low];
    const logMasses = allMus.map((mu, k) => log(normalMass((low - mu) / sigmas[k], (high - mu) / sigmas[k])));
    const logNorms = logMasses.map((m, k) => m + log(sigmas[k]) + LOG_SQRT_2PI);
    return { kind: 'numeric' as const, def, low, high, mus: allMus, sigmas, logMasses, logNorms };
  });
  return { weights: w.map((x) => x / total), logWeights: w.map((x) => log(x / total)), columns };
}

/**
 * Optuna's univariate bandwidths: the larger gap to a neighbour (the prior's mean and the bounds count as
 * neighbours, the outermost points use their inner gap only), clipped to [range / min(100, kernels + 1), range].
 */
function neighbourSigmas(mus: number[], low: number, high: number): number[] {
  const withPrior = [...mus, 0.5 * (low + high)];
  const order = withPrior.map((_, i) => i).sort((a, b) => withPrior[a] - withPrior[b] || a - b);
  const s = [low, ...order.map((i) => withPrior[i]), high];
  const sorted = order.map((_, j) => max(s[j + 1] - s[j], s[j + 2] - s[j + 1]));
  if (s.length >= 4) {
    sorted[0] = s[2] - s[1];
    sorted[sorted.length - 1] = s[s.length - 2] - s[s.length - 3];
  }
  const sigmas = new Array<number>(withPrior.length);
  order.forEach((i, j) => (sigmas[i] = sorted[j]));
  return mus.map((_, i) => clipSigma(sigmas[i], mus.length, high - low));
}

/** Optuna's multivariate bandwidth: Scott's rule, 0.2 · n^(-1/(d+4)) of the range, with the same clip. */
function scottSigmas(n: number, d: number, range: number): number[] {
  return Array<number>(n).fill(clipSigma(0.2 * max(n, 1) ** (-1 / (d + 4)) * range, n, range));
}

function clipSigma(sigma: number, n: number, range: number): number {
  return min(range, max(range / min(100, n + 2), sigma));
}

/** A candidate: numeric knobs as legal values on their own scale (rounded, clamped), categoricals as choice indices. */
function drawJoint(e: Estimator, rng: Rng): number[] {
  const k = rng.weighted(e.weights);
  return e.columns.map((c) => {
    if (c.kind === 'categorical') return rng.weighted(c.probs[k]);
    if (c.high === c.low) return c.def.low;
    return toKnob(c.def, truncatedNormal(c.mus[k], c.sigmas[k], c.low, c.high, rng));
  });
}

/** Snaps an internal-scale draw to a legal knob value (rounded for ints), still on the knob's own scale. */
function toKnob(def: NumericDef, x: number): number {
  const v = def.log ? exp(x) : x;
  return min(def.high, max(def.low, def.type === 'int' ? round(v) : v));
}

function toParamValue(def: ParamDef, x: number): ParamValue {
  return def.type === 'categorical' ? def.choices[x] : x;
}

function truncatedNormal(mu: number, sigma: number, low: number, high: number, rng: Rng): number {
  // Every mean lies in the range and every bandwidth is at most the range, so at least a third of each kernel's
  // mass is inside: rejection needs few draws, and the fallback practically never runs.
  for (let tries = 0; tries < 100; tries++) {
    const x = mu + sigma * rng.normal();
    if (x >= low && x <= high) return x;
  }
  return min(high, max(low, mu));
}

/**
 * log of the estimator's probability at a candidate: a density for floats, and for ints the mass of the value's
 * bin, so wide and narrow log-scale bins compare fairly.
 */
function logJoint(e: Estimator, x: number[]): number {
  // The candidate on each knob's internal scale, once rather than per kernel; an int as its bin's two edges.
  const D = e.columns.length;
  const lo: number[] = [];
  const hi: number[] = [];
  for (let d = 0; d < D; d++) {
    const c = e.columns[d];
    const isInt = c.kind === 'numeric' && c.def.type === 'int';
    lo.push(c.kind === 'numeric' ? internal(c.def, isInt ? x[d] - 0.5 : x[d]) : 0);
    hi.push(c.kind === 'numeric' && isInt ? internal(c.def, x[d] + 0.5) : 0);
  }
  // A streaming log-sum-exp over the kernels: this loop is the sampler's hot path, so no per-kernel arrays.
  let top = NEG_INF;
  let sum = 0;
  for (let k = 0; k < e.logWeights.length; k++) {
    let s = e.logWeights[k];
    for (let d = 0; d < D; d++) {
      const c = e.columns[d];
      // A float knob fixed by low = high has no density to speak of; it must not turn the whole score into NaN.
      if (c.kind === 'numeric' && c.high === c.low) continue;
      if (c.kind === 'categorical') {
        s += c.logProbs[k][x[d]];
      } else if (c.def.type === 'int') {
        s += log(normalMass((lo[d] - c.mus[k]) / c.sigmas[k], (hi[d] - c.mus[k]) / c.sigmas[k])) - c.logMasses[k];
      } else {
        const z = (lo[d] - c.mus[k]) / c.sigmas[k];
        s += -0.5 * z * z - c.logNorms[k];
      }
    }
    if (s === NEG_INF) continue;
    if (s > top) {
      sum = sum * exp(top - s) + 1;
      top = s;
    } else {
      sum += exp(s - top);
    }
  }
  return top === NEG_INF ? NEG_INF : top + log(sum);
}

/** P(a ≤ Z ≤ b) for a standard normal, computed from the nearer tail so narrow far-out bins keep their precision. */
function normalMass(a: number, b: number): number {
  if (a >= 0) return 0.5 * (erfc(a * SQRT1_2) - erfc(b * SQRT1_2));
  if (b <= 0) return 0.5 * (erfc(-b * SQRT1_2) - erfc(-a * SQRT1_2));
  return 1 - 0.5 * (erfc(-a * SQRT1_2) + erfc(b * SQRT1_2));
}

/**
 * TPE's acquisition for a given configuration, log l(x) − log g(x) summed over the knobs (the independent model):
 * higher is more promising. The hybrid proposer ranks an agent's proposals with it before any GPU time is spent.
 * `params` must be valid for `space` (validateParams).
 */
export function tpeScore(space: SearchSpace, trials: readonly Trial[], params: Params, options: TpeOptions = {}): number {
  const opts = withDefaults(options);
  const { good, bad } = splitTrials(trials, opts.gamma);
  let total = 0;
  for (const name of Object.keys(space)) {
    const def = space[name];
    const l = fitJoint({ [name]: def }, good, opts.priorWeight, 'neighbour');
    const g = fitJoint({ [name]: def }, bad, opts.priorWeight, 'neighbour');
    const x = def.type === 'categorical' ? def.choices.indexOf(params[name]) : (params[name] as number);
    total += logJoint(l, [x]) - logJoint(g, [x]);
  }
  return total;
}

/** The TPE options a spec may set in `innerLoop.samplerOptions`. */
export const tpeOptionsSchema = z.strictObject({
  candidates: z.number().int().min(1).optional(),
  priorWeight: z.number().positive().optional(),
  multivariate: z.boolean().optional(),
  bandwidth: z.enum(['neighbour', 'scott']).optional(),
  /** Code only (proposeBatch's `tpe`): a spec is JSON and cannot hold a function. */
  gamma: z.custom<(n: number) => number>((v) => typeof v === 'function', 'must be a function').optional(),
});

/**
 * `innerLoop.proposer: tpe`: uniform start-up draws until `startupTrials` finished trials (with a finite value)
 * exist, then TPE. Within a batch each proposal joins the history as pending before the next is drawn (the
 * constant liar). Pruned trials, and finished ones with a non-finite value, count as bad: their value is unknown or
 * useless, but they were stopped for being worse than the rest.
 */
export class TpeSampler implements Sampler {
  constructor(
    private readonly startupTrials: number,
    private readonly options: TpeOptions = {},
  ) {}

  propose(ctx: SamplerContext): Params[] {
    const finished = ctx.history.filter((t) => t.state === 'finished' && t.value !== undefined && Number.isFinite(t.value));
    const useModel = finished.length > 0 && finished.length >= this.startupTrials;
    return distinctBatch(ctx, (trials) =>
      useModel ? proposeTpe(ctx.space, trials, ctx.rng, this.options) : proposeRandom(ctx.space, ctx.rng),
    );
  }

  /** Model-based or a numbered start-up draw; the count is of finished trials, whatever their value. */
  describe(ctx: SamplerContext, index: number): ProposalLabel {
    const finished = ctx.history.filter((t) => t.state === 'finished').length;
    if (finished >= this.startupTrials && finished > 0) {
      return {
        proposer: 'tpe',
        hypothesis: `TPE after ${finished} finished trials: drawn where the best trials' density is high relative to the rest`,
      };
    }
    // Start-up draws are numbered across the loop (and the campaign's earlier trials), one per proposal.
    return {
      proposer: 'tpe-startup',
      hypothesis: `start-up trial ${ctx.history.length + index + 1} (the model starts after ${this.startupTrials} finished trials; ${finished} so far): uniform draw to seed it`,
    };
  }
}
