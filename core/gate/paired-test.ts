// Paired tests over per-item differences (candidate − incumbent, oriented so positive = better): the
// promotion gate's evidence that a candidate beats the incumbent on the same held-out items, not by noise.
//
// The gate's p-value comes from the sign-flip permutation test by default. Under the paired null ("the two
// models are interchangeable on each item") every difference is as likely to be +d as −d, so flipping signs
// gives the null distribution exactly: the test controls its type-I rate at any number of items, and for
// 0/1 exact-match items it is the exact McNemar test (only discordant items count). The paired bootstrap is
// kept for the one-sided lower confidence bound on the mean difference, which the decision records; as a
// test it is anti-conservative on few items (its spread is (n−1)/n of the sample's), which is the wrong way
// round for a gate whose job is to reject noise.
//
// Items are not always independent: the built-in task's items are cut from a few source files, and items from one
// file rise and fall together. With a layout (core/gate/item-layout.ts: a weight and a cluster per item) the test
// runs on clusterDeltas: one value per cluster, so the sign flips flip a whole cluster at once, the bootstrap
// resamples clusters, and the mean is the weighted item mean. One cluster per item with equal weights gives the
// item deltas back unchanged: the item-level test exactly.

// Bound once: a global lookup per call is slow inside jest's vm sandbox, and these run in every resample.
const { imul, floor, trunc, min, max, abs } = Math;

/** Nonzero differences up to this count are enumerated exactly (2^16 sign patterns) instead of sampled. */
export const EXACT_SIGN_FLIP_MAX = 16;

/** Uniform in [0, 1): mulberry32, seeded; nothing in the gate touches Math.random. */
export function seededUniform(seed: number): () => number {
  let a = mix32(trunc(seed));
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = imul(a ^ (a >>> 15), 1 | a);
    t = (t + imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The murmur3 finaliser: neighbouring seeds give unrelated streams. */
function mix32(x: number): number {
  let h = imul((x ^ 0x9e3779b9) | 0, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export interface ResampleOptions {
  /** Random resamples. */
  resamples: number;
  seed: number;
}

export interface BootstrapResult {
  n: number;
  meanDelta: number;
  /** One-sided: the share of bootstrap means at or below zero (add-one smoothed). */
  pValue: number;
  /** The `alpha` quantile of the bootstrap means: a one-sided (1 − alpha) lower confidence bound. */
  lowerBound: number;
  resamples: number;
}

export interface SignFlipResult {
  n: number;
  meanDelta: number;
  /** One-sided: the share of sign patterns whose mean is at least the observed one. */
  pValue: number;
  /** True when every sign pattern of the nonzero differences was enumerated (then `resamples` is 0). */
  exact: boolean;
  resamples: number;
}

export type PairedTestKind = 'sign-flip' | 'bootstrap';

export interface PairedTestResult {
  test: PairedTestKind;
  n: number;
  meanDelta: number;
  /** One-sided p-value of H0 "the candidate is no better" from `test`. */
  pValue: number;
  /** Bootstrap (1 − alpha) lower confidence bound on the mean difference, whichever test gave `pValue`. */
  lowerBound: number;
  exact: boolean;
  resamples: number;
}

/** Per-item differences oriented so positive = better: candidate − incumbent, or the reverse when lower is better. */
export function orientedDeltas(candidate: readonly number[], incumbent: readonly number[], higherIsBetter: boolean): number[] {
  if (candidate.length !== incumbent.length)
    throw new RangeError(`paired scores differ in length (${candidate.length} vs ${incumbent.length})`);
  return candidate.map((c, i) => (higherIsBetter ? c - incumbent[i] : incumbent[i] - c));
}

export function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return xs.length ? s / xs.length : 0;
}

/** The unbiased sample variance (n − 1 denominator); 0 for fewer than two values. */
export function sampleVariance(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return s / (xs.length - 1);
}

/** Per item: its weight in the mean (default 1) and its cluster (default: its own). */
export interface ItemLayout {
  weights?: readonly number[];
  clusters?: readonly string[];
}

/** Each cluster's total weighted difference Σ w·d and total weight Σ w, in the order clusters first appear. */
export function clusterTotals(deltas: readonly number[], layout: ItemLayout = {}): { totals: number[]; weights: number[] } {
  const { weights, clusters } = layout;
  if (weights && weights.length !== deltas.length) throw new RangeError(`${weights.length} weights for ${deltas.length} differences`);
  if (clusters && clusters.length !== deltas.length) throw new RangeError(`${clusters.length} clusters for ${deltas.length} differences`);
  const totals: number[] = [];
  const totalWeights: number[] = [];
  const index = new Map<string, number>();
  deltas.forEach((d, i) => {
    const w = weights ? weights[i] : 1;
    const key = clusters?.[i];
    let c = key === undefined ? undefined : index.get(key);
    if (c === undefined) {
      c = totals.length;
      if (key !== undefined) index.set(key, c);
      totals.push(0);
      totalWeights.push(0);
    }
    totals[c] += w * d;
    totalWeights[c] += w;
  });
  return { totals, weights: totalWeights };
}

/**
 * One value per cluster, T_c · G / W (T_c its total weighted difference, G clusters, W the total weight): their plain
 * mean is the weighted item mean, and their sign flips are the cluster sign-flip test (a constant scale changes no
 * p-value). One cluster per item with unit weights returns the item differences themselves.
 */
export function clusterDeltas(deltas: readonly number[], layout: ItemLayout = {}): number[] {
  if (!layout.weights && !layout.clusters) return [...deltas];
  const { totals, weights } = clusterTotals(deltas, layout);
  const w = weights.reduce((s, x) => s + x, 0);
  if (!(w > 0)) return totals.map(() => 0);
  const scale = totals.length / w;
  return totals.map((t) => t * scale);
}

/**
 * The weighted mean difference and its cluster-robust standard error: Δ = Σ T_c / W and
 * SE² = G/(G − 1) · Σ_c (T_c − W_c·Δ)² / W² (the linearised variance of a ratio mean over G clusters). One cluster per
 * item with unit weights gives sd(d)/√n. `clusters` is G, whose G − 1 are the error's degrees of freedom.
 */
export function clusteredMean(deltas: readonly number[], layout: ItemLayout = {}): { mean: number; se: number; clusters: number } {
  const { totals, weights } = clusterTotals(deltas, layout);
  const g = totals.length;
  const w = weights.reduce((s, x) => s + x, 0);
  if (g === 0 || !(w > 0)) return { mean: 0, se: 0, clusters: g };
  const m = totals.reduce((s, x) => s + x, 0) / w;
  if (g < 2) return { mean: m, se: 0, clusters: g };
  let ss = 0;
  for (let c = 0; c < g; c++) ss += (totals[c] - weights[c] * m) ** 2;
  return { mean: m, se: Math.sqrt((g / (g - 1)) * ss) / w, clusters: g };
}

/** Seeded paired bootstrap of the mean difference: resamples items with replacement. */
export function pairedBootstrap(deltas: readonly number[], opts: ResampleOptions & { alpha: number }): BootstrapResult {
  const n = deltas.length;
  const meanDelta = mean(deltas);
  if (n === 0) return { n, meanDelta: 0, pValue: 1, lowerBound: 0, resamples: 0 };
  const rand = seededUniform(opts.seed ^ 0x0b007);
  const means = new Float64Array(opts.resamples);
  let atOrBelowZero = 0;
  for (let b = 0; b < opts.resamples; b++) {
    let s = 0;
    for (let k = 0; k < n; k++) s += deltas[floor(rand() * n)];
    means[b] = s / n;
    if (means[b] <= 0) atOrBelowZero++;
  }
  means.sort();
  const q = min(opts.resamples - 1, max(0, floor(opts.alpha * opts.resamples)));
  return { n, meanDelta, pValue: (1 + atOrBelowZero) / (1 + opts.resamples), lowerBound: means[q], resamples: opts.resamples };
}

/**
 * Sign-flip permutation test of H0 "mean difference ≤ 0": exact over all 2^m sign patterns when the m nonzero
 * differences are few (zeros never change a sum), else `resamples` random patterns with the add-one estimate.
 */
export function signFlipTest(deltas: readonly number[], opts: ResampleOptions): SignFlipResult {
  const n = deltas.length;
  const meanDelta = mean(deltas);
  const nonzero = deltas.filter((d) => d !== 0);
  const m = nonzero.length;
  if (m === 0) return { n, meanDelta, pValue: 1, exact: true, resamples: 0 };
  const observed = nonzero.reduce((s, d) => s + d, 0);
  // Sums equal to the observed one up to rounding count as "at least as extreme".
  const tolerance = 1e-9 * nonzero.reduce((s, d) => s + abs(d), 0);
  if (m <= EXACT_SIGN_FLIP_MAX) {
    let atLeast = 0;
    const patterns = 2 ** m;
    for (let mask = 0; mask < patterns; mask++) {
      let s = 0;
      for (let k = 0; k < m; k++) s += mask & (1 << k) ? -nonzero[k] : nonzero[k];
      if (s >= observed - tolerance) atLeast++;
    }
    return { n, meanDelta, pValue: atLeast / patterns, exact: true, resamples: 0 };
  }
  const rand = seededUniform(opts.seed ^ 0x5f11b);
  let atLeast = 0;
  for (let b = 0; b < opts.resamples; b++) {
    let s = 0;
    for (let k = 0; k < m; k++) s += rand() < 0.5 ? -nonzero[k] : nonzero[k];
    if (s >= observed - tolerance) atLeast++;
  }
  return { n, meanDelta, pValue: (1 + atLeast) / (1 + opts.resamples), exact: false, resamples: opts.resamples };
}

/** The gate's paired test: the p-value from `test`, the lower confidence bound from the bootstrap. */
export function pairedTest(deltas: readonly number[], opts: ResampleOptions & { alpha: number; test: PairedTestKind }): PairedTestResult {
  const boot = pairedBootstrap(deltas, opts);
  if (opts.test === 'bootstrap')
    return {
      test: 'bootstrap',
      n: boot.n,
      meanDelta: boot.meanDelta,
      pValue: boot.pValue,
      lowerBound: boot.lowerBound,
      exact: false,
      resamples: boot.resamples,
    };
  const flip = signFlipTest(deltas, opts);
  return {
    test: 'sign-flip',
    n: flip.n,
    meanDelta: flip.meanDelta,
    pValue: flip.pValue,
    lowerBound: boot.lowerBound,
    exact: flip.exact,
    resamples: flip.resamples,
  };
}
