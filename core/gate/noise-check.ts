// The gate's own noise: before it believes a held-out gain, the gate knows how far its metric moves by chance.
// Two parts: across seeds (σ_seed, the standard deviation of the held-out score over k reruns of the incumbent's
// recipe with other seeds: what retraining alone changes) and across items (σ_items, the paired test's standard
// error of the mean per-item difference: what another draw of held-out items changes). The candidate's gain Δ must
// exceed a multiple of σ (below), σ = √(m·σ_seed² + σ_items²), besides the margin (heldoutImprovement). m is how many of the
// two compared models are one draw of a seeded training: 2 when the incumbent was trained (Δ between two such draws
// spreads √2 × as wide as one score: bench/gate-noise.ts measured a null candidate, the incumbent's recipe from
// another seed, promoted 3 times in 20 with m = 1), 1 when it is the untrained baseline (deterministic).
//
// Both parts are estimates, σ_seed from only k − 1 degrees of freedom (k = 3 reruns: 2), so a normal multiple of their
// sum is too narrow: the bar is `sigmas` turned into the Student t multiple with the same one-sided tail,
// t_df⁻¹(Φ(sigmas)), where df is the Welch–Satterthwaite degrees of freedom of the sum (core/gate/student-t.ts).
import { higherIsBetter } from '../eval-suite/suite-metrics';
import { clusteredMean, clusterTotals, mean, orientedDeltas, sampleVariance, type ItemLayout } from './paired-test';
import { tMultiple } from './student-t';
import { layoutOf, type Weighting } from './item-layout';
import type { CheckResult, GateCheck, GateEvidence } from './evidence';

export const NOISE_RULE = 'heldoutAboveNoise';
/** The proposer of the gate's seed reruns (activities/outer/plan-seed-reruns.ts): never a candidate, never counted as search. */
export const SEED_RERUN_PROPOSER = 'seed-rerun';

/** The spread the gate compares a gain with; every decision records it. */
export interface GateNoise {
  /** Mean paired held-out gain, oriented so positive = better. */
  delta: number;
  /** Sample standard deviation of the seed reruns' held-out means (under the items' weights); 0 when fewer than two were scored. */
  sigmaSeed: number;
  /** Standard error of the mean paired difference, cluster-robust and weighted (sd(deltas) / √n with neither). */
  sigmaItems: number;
  /**
   * The part of σ_seed that is per-item seed noise (η: an item's score moves with the seed apart from the model's
   * whole shift), which σ_items already counts; absent when the reruns' per-item scores were not at hand.
   */
  sigmaSeedPerItem?: number;
  /** √(σ_seed² − η²)₊: the seeds' shift common to every item, the seed term of σ once η is taken out. */
  sigmaSeedShift?: number;
  /** √(m·σ_shift² + σ_items²), σ_shift = σ_seed where η was not measured (η then counts twice: conservative). */
  sigma: number;
  /** m: the compared models whose scores are one seed's draw (2, or 1 when the incumbent is the untrained baseline). */
  seededModels: number;
  /** The stated multiple of σ the gain must exceed, as if σ were known (a normal tail). */
  sigmas: number;
  /**
   * Welch–Satterthwaite degrees of freedom of σ²: σ⁴ / ((m·σ_shift²)²/(k − 1) + σ_items⁴/(G − 1)), each term only
   * where it was measured; 0 when nothing was (σ = 0, no bar to widen). At least the smaller of k − 1 and G − 1.
   */
  df: number;
  /** The multiple the gain must exceed: t_df⁻¹(Φ(sigmas)), the same tail as `sigmas` with σ estimated (`sigmas` at df 0). */
  multiple: number;
  /** Seed reruns asked for, and those whose held-out score went into σ_seed. */
  seedsAsked: number;
  seedsScored: number;
  /** G: the clusters behind σ_items (the items' count when each is its own), G − 1 its df. */
  clusters: number;
  /** How Δ, σ_items and the reruns' means weigh items (core/gate/item-layout.ts). */
  weighting: Weighting;
}

/** How the items are weighed and grouped (core/gate/item-layout.ts), and the reruns' per-item scores. */
export interface NoiseLayout extends ItemLayout {
  /**
   * Per paired item (in the deltas' order), each scored rerun's score on it, in one rerun order. With them σ_seed
   * is split in two (seedSpread) and its per-item part, which σ_items already counts, is taken out of the seed term.
   */
  seedItems?: readonly (readonly number[])[];
}

/** σ from the paired deltas and the seed reruns' held-out scores (pure; `seedScores` may be empty). */
export function noiseOf(
  deltas: readonly number[],
  seedScores: readonly number[],
  sigmas: number,
  seedsAsked: number,
  seededModels: 1 | 2 = 2,
  layout: NoiseLayout = {},
): GateNoise {
  const items = clusteredMean(deltas, layout);
  const spread = layout.seedItems ? seedSpread(layout.seedItems, layout) : undefined;
  const scores = spread?.scores ?? seedScores;
  const k = scores.length;
  const sigmaSeed = k >= 2 ? Math.sqrt(sampleVariance(scores)) : 0;
  // The per-item part η² of σ_seed² (σ_items already holds it), and what is left: the shift common to all items.
  const perItem = spread && k >= 2 ? spread.perItem : undefined;
  const shift = perItem === undefined ? sigmaSeed : Math.sqrt(Math.max(0, sigmaSeed ** 2 - perItem ** 2));
  const seedPart = seededModels * shift * shift;
  const itemsPart = items.se * items.se;
  // Welch–Satterthwaite over the two parts: the seed term with k − 1 df, σ_items with G − 1. The η subtracted from the
  // seed term has (k − 1)(G − 1) df, so its own uncertainty is left out: carrying it (the exact Satterthwaite of a
  // difference of mean squares) sends df towards 0 whenever σ_seed is mostly η, and the t multiple to absurd heights
  // (bench/gate-noise.ts measured a mean multiple of 10^8 for honest candidates that way).
  const df = satterthwaite([
    [seedPart, k - 1],
    [itemsPart, items.clusters - 1],
  ]);
  const total = seedPart + itemsPart;
  return {
    delta: items.mean,
    sigmaSeed,
    ...(perItem === undefined ? {} : { sigmaSeedPerItem: perItem, sigmaSeedShift: shift }),
    sigmaItems: items.se,
    sigma: Math.sqrt(total),
    seededModels,
    sigmas,
    df,
    multiple: df > 0 ? tMultiple(sigmas, df) : sigmas,
    seedsAsked,
    seedsScored: k,
    clusters: items.clusters,
    weighting: layout.weights ? 'bytes' : 'items',
  };
}

/**
 * The seed reruns' held-out means under the layout's weights, and η, the part of their spread that is per-item seed
 * noise. Model: rerun r's score on item j is μ_j + γ_r + ε_rj. σ_seed² estimates Var(γ) + η², η² = Var(Σ_j v_j ε_rj)
 * (v the normalised weights); σ_items², from candidate − incumbent per item, already holds each seeded model's η².
 * η² is estimated from the double-centred residuals e_rj = x_rj − x̄_j − (M_r − M̄), cluster by cluster:
 * η² = 1/(k − 1) · Σ_r G/(G − 1) · Σ_c (Σ_{j∈c} v_j e_rj)², with (k − 1)(G − 1) df (the two-way ANOVA's residual
 * mean square over n when each item is its own cluster with equal weights).
 */
export function seedSpread(
  seedItems: readonly (readonly number[])[],
  layout: ItemLayout = {},
): { scores: number[]; perItem: number; df: number } | undefined {
  const n = seedItems.length;
  const k = n > 0 ? seedItems[0].length : 0;
  if (k === 0 || seedItems.some((s) => s.length !== k)) return undefined;
  const w = layout.weights ?? seedItems.map(() => 1);
  const total = w.reduce((a, b) => a + b, 0);
  if (!(total > 0)) return undefined;
  const v = w.map((x) => x / total);
  const scores = Array.from({ length: k }, (_, r) => seedItems.reduce((s, x, j) => s + v[j] * x[r], 0));
  if (k < 2) return { scores, perItem: 0, df: 0 };
  const grand = mean(scores);
  const itemMeans = seedItems.map((x) => mean(x));
  let sum = 0;
  let clusters = 0;
  for (let r = 0; r < k; r++) {
    const residuals = seedItems.map((x, j) => v[j] * (x[r] - itemMeans[j] - (scores[r] - grand)));
    const { totals } = clusterTotals(residuals, { clusters: layout.clusters });
    clusters = totals.length;
    if (clusters >= 2) sum += (clusters / (clusters - 1)) * totals.reduce((s, t) => s + t * t, 0);
  }
  if (clusters < 2) return { scores, perItem: 0, df: 0 };
  return { scores, perItem: Math.sqrt(sum / (k - 1)), df: (k - 1) * (clusters - 1) };
}

/**
 * The Welch–Satterthwaite degrees of freedom of a sum of variance estimates, each [value, its df]: (Σ v)² / Σ v²/df.
 * A part not measured (value 0, or df < 1) adds nothing; 0 when no part was measured.
 */
export function satterthwaite(parts: readonly (readonly [number, number])[]): number {
  let sum = 0;
  let denominator = 0;
  for (const [v, df] of parts) {
    if (!(v > 0 && df >= 1)) continue;
    sum += v;
    denominator += (v * v) / df;
  }
  return denominator > 0 ? (sum * sum) / denominator : 0;
}

const f4 = (x: number) => x.toFixed(4);
const round = (x: number) => Math.round(x * 1e6) / 1e6;

/** The noise figures of one evidence, or undefined when the primary metric has no paired items. */
export function gateNoiseOf(e: GateEvidence): GateNoise | undefined {
  const items = e.items[e.settings.metric] ?? [];
  if (items.length === 0) return undefined;
  const deltas = orientedDeltas(
    items.map((i) => i.candidate),
    items.map((i) => i.incumbent),
    higherIsBetter(e.settings.metric),
  );
  const seeded = e.incumbentUntrained ? 1 : 2;
  const layout = layoutOf(items, e.settings.metric, e.settings.clusterBy);
  // The reruns' per-item scores, where every paired item has them from the same reruns: σ_seed's per-item part.
  const k = e.seedScores?.length ?? 0;
  const seedItems = k >= 2 && items.every((i) => i.seeds?.length === k) ? items.map((i) => i.seeds!) : undefined;
  const asked = e.settings.noise.enabled ? e.settings.noise.seeds : 0;
  return noiseOf(deltas, e.seedScores ?? [], e.settings.noise.sigmas, asked, seeded, { ...layout, ...(seedItems ? { seedItems } : {}) });
}

/** Reject a held-out gain that does not exceed the t multiple of `noise.sigmas` × σ (strictly). Off: passes and says so. */
export const heldoutAboveNoise: GateCheck = (e): CheckResult => {
  const rule = NOISE_RULE;
  const { metric, noise: settings } = e.settings;
  const n = gateNoiseOf(e);
  if (!settings.enabled) {
    const figures: Record<string, number | string> = { enabled: 'no' };
    if (n) Object.assign(figures, figuresOf(n));
    return { rule, passed: true, reason: 'the noise check is off (promotion.noise.enabled: false)', figures };
  }
  if (!n)
    return {
      rule,
      passed: false,
      reason: `no held-out ${metric} scores for both checkpoints: no gain to weigh against noise`,
      figures: { n: 0 },
    };
  const bound = n.multiple * n.sigma;
  const seeds =
    n.seedsAsked === 0
      ? 'no seed reruns asked (σ_seed = 0)'
      : n.seedsScored < 2
        ? `σ_seed not measured: ${n.seedsScored} of ${n.seedsAsked} seed reruns scored (σ_seed = 0)`
        : `σ_seed ${f4(n.sigmaSeed)} from ${n.seedsScored} seed reruns`;
  const stated = `held-out ${metric} improves by Δ = ${f4(n.delta)}; ${multipleText(n)} = ${f4(bound)} (σ = ${f4(n.sigma)}: ${seeds}, σ_items ${f4(n.sigmaItems)}; ${seededText(n)})`;
  const passed = n.delta > bound;
  return {
    rule,
    passed,
    reason: `${stated}: ${passed ? 'above noise' : 'within noise'}`,
    figures: { ...figuresOf(n), bound: round(bound) },
  };
};

/**
 * `4.53σ (2σ as t, df 2.1)`; the stated multiple alone where nothing was measured, or in a decision recorded before
 * the t multiple (no `df`: it held the normal one).
 */
const multipleText = (n: { sigmas: number; df?: number; multiple?: number }) =>
  n.df && n.multiple !== undefined ? `${n.multiple.toFixed(2)}σ (${n.sigmas}σ as t, df ${n.df.toFixed(1)})` : `${n.sigmas}σ`;

const seededText = (n: GateNoise) =>
  n.seededModels === 1 ? 'σ_seed counted once: the incumbent is the untrained baseline' : 'σ_seed counted for both models';

function figuresOf(n: GateNoise): Record<string, number | string> {
  const { enabled: _enabled, bound: _bound, ...figures } = noiseSummaryOf(n, true);
  return figures;
}

/** The decision's `noise` figures and the gate summary's: σ in both parts, the multiple and Δ, rounded. */
export function noiseSummaryOf(n: GateNoise, enabled: boolean): NoiseSummary & { df: number; multiple: number } {
  const r = (x: number) => round(x);
  return {
    delta: r(n.delta),
    sigmaSeed: r(n.sigmaSeed),
    ...(n.sigmaSeedPerItem === undefined ? {} : { sigmaSeedPerItem: r(n.sigmaSeedPerItem), sigmaSeedShift: r(n.sigmaSeedShift ?? 0) }),
    sigmaItems: r(n.sigmaItems),
    sigma: r(n.sigma),
    seededModels: n.seededModels,
    sigmas: n.sigmas,
    df: Math.round(n.df * 100) / 100,
    multiple: Math.round(n.multiple * 1e4) / 1e4,
    seedsAsked: n.seedsAsked,
    seedsScored: n.seedsScored,
    bound: r(n.multiple * n.sigma),
    clusters: n.clusters,
    weighting: n.weighting,
    claim: enabled && n.seedsScored >= 2 ? 'recipe' : 'checkpoint',
    enabled,
  };
}

export type GateClaim = 'checkpoint' | 'recipe';

/** GateNoise rounded, with the bound (`multiple` × σ) and whether the check applied. */
export interface NoiseSummary extends Omit<GateNoise, 'df' | 'multiple' | 'clusters' | 'weighting'> {
  /** Absent in decisions recorded before the t multiple (their bound was `sigmas` × σ). */
  df?: number;
  multiple?: number;
  /** Absent in decisions recorded before clusters and weighting (items alone, unweighted). */
  clusters?: number;
  weighting?: Weighting;
  /**
   * What a pass claims. `recipe`: σ_seed is in the bar, so the gain is beyond what retraining the incumbent's recipe
   * with another seed moves (the candidate's recipe is better). `checkpoint`: no seed spread in the bar (no reruns, or
   * the check off), so the gain is beyond another draw of items only (this checkpoint beats that one).
   */
  claim?: GateClaim;
  bound: number;
  enabled: boolean;
}

/** One line for the report, the dashboard's gate table and `flywheel status`: Δ against the multiple of σ, both parts. */
export function noiseLine(n: NoiseSummary): string {
  const f = (x: number) => x.toFixed(4);
  const verdict = !n.enabled ? 'check off' : n.delta > n.bound ? 'above noise' : 'within noise';
  // Decisions recorded before `seededModels` counted σ_seed once.
  const m = n.seededModels ?? 1;
  const shift = n.sigmaSeedShift === undefined ? '' : ` (${f(n.sigmaSeedShift)} shared by all items)`;
  const clusters = n.clusters === undefined ? '' : ` over ${n.clusters} clusters`;
  const claim = n.claim ? `; ${n.claim} claim${n.weighting === 'bytes' ? ', byte-weighted' : ''}` : '';
  return `Δ ${f(n.delta)} vs ${multipleText(n)} ${f(n.bound)} (σ ${f(n.sigma)}: σ_seed ${f(n.sigmaSeed)}${shift}${m === 2 ? ' ×√2' : ''} from ${n.seedsScored} of ${n.seedsAsked} seeds, σ_items ${f(n.sigmaItems)}${clusters}${claim}): ${verdict}`;
}
