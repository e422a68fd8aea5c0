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
import { mean, orientedDeltas, sampleVariance } from './paired-test';
import { tMultiple } from './student-t';
import type { CheckResult, GateCheck, GateEvidence } from './evidence';

export const NOISE_RULE = 'heldoutAboveNoise';
/** The proposer of the gate's seed reruns (activities/outer/plan-seed-reruns.ts): never a candidate, never counted as search. */
export const SEED_RERUN_PROPOSER = 'seed-rerun';

/** The spread the gate compares a gain with; every decision records it. */
export interface GateNoise {
  /** Mean paired held-out gain, oriented so positive = better. */
  delta: number;
  /** Sample standard deviation of the seed reruns' held-out scores; 0 when fewer than two were scored. */
  sigmaSeed: number;
  /** Standard error of the mean paired difference: sd(deltas) / √n. */
  sigmaItems: number;
  /** √(m·σ_seed² + σ_items²). */
  sigma: number;
  /** m: the compared models whose scores are one seed's draw (2, or 1 when the incumbent is the untrained baseline). */
  seededModels: number;
  /** The stated multiple of σ the gain must exceed, as if σ were known (a normal tail). */
  sigmas: number;
  /**
   * Welch–Satterthwaite degrees of freedom of σ²: σ⁴ / ((m·σ_seed²)²/(k − 1) + σ_items⁴/(n − 1)), each term only
   * where it was measured; 0 when nothing was (σ = 0, no bar to widen).
   */
  df: number;
  /** The multiple the gain must exceed: t_df⁻¹(Φ(sigmas)), the same tail as `sigmas` with σ estimated (`sigmas` at df 0). */
  multiple: number;
  /** Seed reruns asked for, and those whose held-out score went into σ_seed. */
  seedsAsked: number;
  seedsScored: number;
}

/** σ from the paired deltas and the seed reruns' held-out scores (pure; `seedScores` may be empty). */
export function noiseOf(
  deltas: readonly number[],
  seedScores: readonly number[],
  sigmas: number,
  seedsAsked: number,
  seededModels: 1 | 2 = 2,
): GateNoise {
  const sigmaItems = deltas.length >= 2 ? Math.sqrt(sampleVariance(deltas) / deltas.length) : 0;
  const sigmaSeed = seedScores.length >= 2 ? Math.sqrt(sampleVariance(seedScores)) : 0;
  const seedPart = seededModels * sigmaSeed * sigmaSeed;
  const itemsPart = sigmaItems * sigmaItems;
  const df = satterthwaite([
    [seedPart, seedScores.length - 1],
    [itemsPart, deltas.length - 1],
  ]);
  return {
    delta: mean(deltas),
    sigmaSeed,
    sigmaItems,
    sigma: Math.sqrt(seedPart + itemsPart),
    seededModels,
    sigmas,
    df,
    multiple: df > 0 ? tMultiple(sigmas, df) : sigmas,
    seedsAsked,
    seedsScored: seedScores.length,
  };
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
  return noiseOf(deltas, e.seedScores ?? [], e.settings.noise.sigmas, e.settings.noise.enabled ? e.settings.noise.seeds : 0, seeded);
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

function figuresOf(n: GateNoise): Record<string, number> {
  const { enabled: _enabled, bound: _bound, ...figures } = noiseSummaryOf(n, true);
  return figures;
}

/** The decision's `noise` figures and the gate summary's: σ in both parts, the multiple and Δ, rounded. */
export function noiseSummaryOf(n: GateNoise, enabled: boolean): NoiseSummary & { df: number; multiple: number } {
  const r = (x: number) => round(x);
  return {
    delta: r(n.delta),
    sigmaSeed: r(n.sigmaSeed),
    sigmaItems: r(n.sigmaItems),
    sigma: r(n.sigma),
    seededModels: n.seededModels,
    sigmas: n.sigmas,
    df: Math.round(n.df * 100) / 100,
    multiple: Math.round(n.multiple * 1e4) / 1e4,
    seedsAsked: n.seedsAsked,
    seedsScored: n.seedsScored,
    bound: r(n.multiple * n.sigma),
    enabled,
  };
}

/** GateNoise rounded, with the bound (`multiple` × σ) and whether the check applied. */
export interface NoiseSummary extends Omit<GateNoise, 'df' | 'multiple'> {
  /** Absent in decisions recorded before the t multiple (their bound was `sigmas` × σ). */
  df?: number;
  multiple?: number;
  bound: number;
  enabled: boolean;
}

/** One line for the report, the dashboard's gate table and `flywheel status`: Δ against the multiple of σ, both parts. */
export function noiseLine(n: NoiseSummary): string {
  const f = (x: number) => x.toFixed(4);
  const verdict = !n.enabled ? 'check off' : n.delta > n.bound ? 'above noise' : 'within noise';
  // Decisions recorded before `seededModels` counted σ_seed once.
  const m = n.seededModels ?? 1;
  return `Δ ${f(n.delta)} vs ${multipleText(n)} ${f(n.bound)} (σ ${f(n.sigma)}: σ_seed ${f(n.sigmaSeed)}${m === 2 ? ' ×√2' : ''} from ${n.seedsScored} of ${n.seedsAsked} seeds, σ_items ${f(n.sigmaItems)}): ${verdict}`;
}
