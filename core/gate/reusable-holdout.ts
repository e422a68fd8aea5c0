// Held-out as a budgeted resource: the gate's question "how much better is the candidate on held-out" answered
// through Thresholdout (Dwork, Feldman, Hardt, Pitassi, Reingold & Roth, "The reusable holdout: Preserving
// validity in adaptive data analysis", Science 349, 2015; the algorithm as given in its supplement). The public
// split plays the paper's training set: the query is answered from it unless the held-out answer differs from it by
// more than a noised threshold; only then is the (noised) held-out answer given, and one unit of the suite version's
// budget is spent. When the budget is spent every query is refused (the paper's ⊥): fresh held-out items are needed.
//
// Thresholdout, exactly: T̂ = T + γ, γ ~ Lap(2σ). For each query φ, while budget remains: draw η ~ Lap(4σ); if
// |E_heldout[φ] − E_public[φ]| > T̂ + η, answer E_heldout[φ] + ξ with ξ ~ Lap(σ), spend one unit and redraw γ;
// else answer E_public[φ]. Here γ is drawn from a seed of the suite version and the units spent so far (so it is
// redrawn exactly when a unit is spent, and the same for every campaign on that version), η and ξ from a seed of
// the decision id: a decision recomputes to the same answer, and nothing reads Math.random.
//
// What the public answer means here. The public split is the inner loop's selection split: the candidate won there
// among many experiments, so its public gain is biased upward. That is the paper's setting (the analyst overfits the
// training set freely); Thresholdout does not assume the training answer is unbiased, it checks it. A public answer
// says "held-out agrees with this to within T̂ + η": the gain the gate claims is the selection split's, confirmed
// by held-out to within the threshold; a public gain inflated past that is caught and answered (and paid for) from
// held-out. An inner loop that overfits public by more than T on every candidate spends a unit at every gate.
//
// Units. T and σ are in standard errors of the difference of the two splits' mean gains, √(s²_h/n_h + s²_p/n_p)
// (the same σ as heldoutOutrunsPublic), so one setting fits bits per byte and pass rates alike and T sits above the
// disagreement sampling alone produces. The paper calibrates σ to a fixed query range instead; a data-dependent
// scale makes its privacy argument heuristic here, and docs/eval-integrity.md says so.
import { seededUniform } from './paired-test';

export interface HeldoutBudgetSettings {
  /** Answer the gate's question through Thresholdout and count what it spends; off: held-out is read as before. @default true */
  enabled: boolean;
  /** B: held-out answers a suite version gives, over all campaigns, before the gate refuses to read it. @default 20 */
  queries: number;
  /** T, in standard errors of the public-minus-held-out difference. @default 3 */
  threshold: number;
  /** σ, in the same standard errors: γ ~ Lap(2σ), η ~ Lap(4σ), ξ ~ Lap(σ). @default 0.25 */
  noiseScale: number;
}

/** The gate's question on one evidence: the two splits' mean paired gains (oriented, positive = better). */
export interface HoldoutQuery {
  /** Mean gain on the held-out items. */
  heldout: number;
  /** Mean gain on the public items; absent when public was not scored for both (then held-out answers, and pays). */
  public?: number;
  /** The standard error T and σ are counted in (see above); > 0. */
  scale: number;
}

export type AnsweredFrom = 'public' | 'heldout' | 'none';

export interface HoldoutAnswer {
  /** The gain the gate claims; undefined when the budget was already spent (⊥). */
  answer?: number;
  answeredFrom: AnsweredFrom;
  /** Units this query spent: 1 for a held-out answer, else 0. */
  spent: 0 | 1;
  /** Units spent on the suite version before this query, and B. */
  spentBefore: number;
  of: number;
  /** |held-out − public| and the noised threshold T̂ + η it was compared with, in the metric's units. */
  disagreement?: number;
  noisedThreshold?: number;
}

/** FNV-1a of a string: a 32-bit seed from a decision id or a suite version. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Laplace(0, b) by the inverse CDF of one uniform draw. */
export function laplace(rand: () => number, b: number): number {
  // u in (−½, ½); the clamp keeps log() finite on the draw 0.
  const u = Math.min(rand(), 1 - 1e-16) - 0.5;
  return -b * Math.sign(u) * Math.log(1 - 2 * Math.abs(u));
}

/** The budget is spent: the gate must refuse the query (⊥) and ask for fresh held-out items. */
export function budgetSpent(spentBefore: number, s: HeldoutBudgetSettings): boolean {
  return spentBefore >= s.queries;
}

/**
 * One Thresholdout query. `spentBefore` is what the suite version has spent (the ledger), `suiteSeed` names the suite
 * version (γ's stream, per unit spent) and `decisionSeed` the decision (η and ξ). Pure and deterministic.
 */
export function thresholdout(
  q: HoldoutQuery,
  s: HeldoutBudgetSettings,
  seeds: { spentBefore: number; suiteSeed: string; decisionSeed: string },
): HoldoutAnswer {
  const { spentBefore } = seeds;
  const of = s.queries;
  if (budgetSpent(spentBefore, s)) return { answeredFrom: 'none', spent: 0, spentBefore, of };
  const sigma = s.noiseScale * q.scale;
  const gammaDraw = seededUniform(seedOf(`${seeds.suiteSeed}#${spentBefore}`));
  const tHat = s.threshold * q.scale + laplace(gammaDraw, 2 * sigma);
  const draw = seededUniform(seedOf(seeds.decisionSeed));
  const eta = laplace(draw, 4 * sigma);
  const xi = laplace(draw, sigma);
  if (q.public === undefined)
    // No training-side answer to check: the held-out one is given, noised, and paid for.
    return { answer: q.heldout + xi, answeredFrom: 'heldout', spent: 1, spentBefore, of };
  const disagreement = Math.abs(q.heldout - q.public);
  const noisedThreshold = tHat + eta;
  // Means equal up to rounding agree, even at scale 0 (identical per-item gains on both splits).
  const rounding = 1e-12 * (Math.abs(q.heldout) + Math.abs(q.public));
  if (disagreement > noisedThreshold + rounding)
    return { answer: q.heldout + xi, answeredFrom: 'heldout', spent: 1, spentBefore, of, disagreement, noisedThreshold };
  return { answer: q.public, answeredFrom: 'public', spent: 0, spentBefore, of, disagreement, noisedThreshold };
}
