// The gate's own noise: before it believes a held-out gain, the gate knows how far its metric moves by chance.
// Two parts: across seeds (σ_seed, the standard deviation of the held-out score over k reruns of the incumbent's
// recipe with other seeds: what retraining alone changes) and across items (σ_items, the paired test's standard
// error of the mean per-item difference: what another draw of held-out items changes). The candidate's gain Δ must
// exceed `sigmas` × σ, σ = √(m·σ_seed² + σ_items²), besides the margin (heldoutImprovement). m is how many of the
// two compared models are one draw of a seeded training: 2 when the incumbent was trained (Δ between two such draws
// spreads √2 × as wide as one score: bench/gate-noise.ts measured a null candidate, the incumbent's recipe from
// another seed, promoted 3 times in 20 with m = 1), 1 when it is the untrained baseline (deterministic).
import { higherIsBetter } from '../eval-suite/suite-metrics';
import { mean, orientedDeltas, sampleVariance } from './paired-test';
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
  /** The stated multiple of σ the gain must exceed. */
  sigmas: number;
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
  return {
    delta: mean(deltas),
    sigmaSeed,
    sigmaItems,
    sigma: Math.sqrt(seededModels * sigmaSeed * sigmaSeed + sigmaItems * sigmaItems),
    seededModels,
    sigmas,
    seedsAsked,
    seedsScored: seedScores.length,
  };
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

/** Reject a held-out gain that does not exceed `noise.sigmas` × σ (strictly). Off: passes and says so. */
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
  const bound = n.sigmas * n.sigma;
  const seeds =
    n.seedsAsked === 0
      ? 'no seed reruns asked (σ_seed = 0)'
      : n.seedsScored < 2
        ? `σ_seed not measured: ${n.seedsScored} of ${n.seedsAsked} seed reruns scored (σ_seed = 0)`
        : `σ_seed ${f4(n.sigmaSeed)} from ${n.seedsScored} seed reruns`;
  const stated = `held-out ${metric} improves by Δ = ${f4(n.delta)}; ${n.sigmas}σ = ${f4(bound)} (σ = ${f4(n.sigma)}: ${seeds}, σ_items ${f4(n.sigmaItems)}; ${seededText(n)})`;
  const passed = n.delta > bound;
  return {
    rule,
    passed,
    reason: `${stated}: ${passed ? 'above noise' : 'within noise'}`,
    figures: { ...figuresOf(n), bound: round(bound) },
  };
};

const seededText = (n: GateNoise) =>
  n.seededModels === 1 ? 'σ_seed counted once: the incumbent is the untrained baseline' : 'σ_seed counted for both models';

function figuresOf(n: GateNoise): Record<string, number> {
  const { enabled: _enabled, bound: _bound, ...figures } = noiseSummaryOf(n, true);
  return figures;
}

/** The decision's `noise` figures and the gate summary's: σ in both parts, the multiple and Δ, rounded. */
export function noiseSummaryOf(n: GateNoise, enabled: boolean): NoiseSummary {
  const r = (x: number) => round(x);
  return {
    delta: r(n.delta),
    sigmaSeed: r(n.sigmaSeed),
    sigmaItems: r(n.sigmaItems),
    sigma: r(n.sigma),
    seededModels: n.seededModels,
    sigmas: n.sigmas,
    seedsAsked: n.seedsAsked,
    seedsScored: n.seedsScored,
    bound: r(n.sigmas * n.sigma),
    enabled,
  };
}

/** GateNoise rounded, with the bound (`sigmas` × σ) and whether the check applied. */
export interface NoiseSummary extends GateNoise {
  bound: number;
  enabled: boolean;
}

/** One line for the report, the dashboard's gate table and `flywheel status`: Δ against the multiple of σ, both parts. */
export function noiseLine(n: NoiseSummary): string {
  const f = (x: number) => x.toFixed(4);
  const verdict = !n.enabled ? 'check off' : n.delta > n.bound ? 'above noise' : 'within noise';
  // Decisions recorded before `seededModels` counted σ_seed once.
  const m = n.seededModels ?? 1;
  return `Δ ${f(n.delta)} vs ${n.sigmas}σ ${f(n.bound)} (σ ${f(n.sigma)}: σ_seed ${f(n.sigmaSeed)}${m === 2 ? ' ×√2' : ''} from ${n.seedsScored} of ${n.seedsAsked} seeds, σ_items ${f(n.sigmaItems)}): ${verdict}`;
}
