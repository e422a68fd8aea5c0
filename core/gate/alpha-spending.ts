// α-spending across a campaign's successive gates: LORD++ (Ramdas, Yang, Wainwright & Jordan, "Online control of the
// false discovery rate with decaying memory", NeurIPS 2017, §3, the rule they call LORD++). Each gate's paired test
// is granted a level α_t from what earlier gates spent and earned, instead of the same α every time, so that a
// campaign that submits candidate after candidate to the same held-out items cannot collect a false promotion by
// asking often enough.
//
// The rule, exactly: with target α, initial wealth W0 ≤ α, a nonincreasing sequence γ_1 ≥ γ_2 ≥ … ≥ 0 with Σγ ≤ 1,
// and τ_1 < τ_2 < … the indices of the tests that rejected their null ("discoveries") before t,
//
//   α_t = γ_t·W0 + (α − W0)·γ_{t−τ_1} + α·Σ_{j ≥ 2, τ_j < t} γ_{t−τ_j}.
//
// As wealth (Ramdas et al.'s generalised alpha-investing reading): W(0) = W0, each test pays its level, the first
// discovery earns α − W0 and each later one α: W(t) = W(t−1) − α_t + payout·R_t. Every payout is spent along γ
// from the test after it, so W never goes below zero. Guarantees: FDR ≤ α for independent p-values (the paper's
// Theorem 1); and, whatever the dependence (our gates reuse the same held-out items), under the global null (no
// candidate better) the campaign-wide chance of any false promotion is at most W0: until the first discovery the
// levels are γ_t·W0, fixed in advance, so a union bound gives P(any) ≤ Σ_t γ_t·W0 ≤ W0.
//
// γ here is the p-series γ_j = j^(−s)/Z(s), s = `decay` > 1, with Z(s) an upper bound on ζ(s) (so Σγ ≤ 1 holds
// exactly, not up to rounding of an infinite sum). Ramdas et al.'s experiments use Javanmard & Montanari's
// γ_j ∝ log(j ∨ 2)/(j·e^√log j), which keeps some level for thousands of tests but grants the first only 0.05·W0;
// a campaign runs tens of gates, and s = 1.5 grants the first 0.38·W0 while still leaving gate 50 about 1/1000 of it.

export interface AlphaSpendingSettings {
  /** Whether the gate's test uses LORD++'s level; off: every gate tests at `alpha`, as before. @default true */
  enabled: boolean;
  /** W0 as a share of the target α (0 < share ≤ 1). @default 0.5 (Ramdas et al.'s W0 = α/2) */
  initialWealth: number;
  /** s of γ_j ∝ j^(−s): larger spends faster on the first gates and leaves less to late ones. @default 1.5 */
  decay: number;
}

/** What one gate is granted, from the campaign's earlier tests. */
export interface AlphaGrant {
  /** t: this gate's place in the campaign's sequence of tests (1 for the first). */
  index: number;
  /** α_t: the level this gate's paired test is held to. */
  level: number;
  /** The campaign-wide target α. */
  target: number;
  /** W(t−1): the wealth before this test. */
  wealthBefore: number;
  /** What a discovery here earns: α − W0 for the campaign's first, α after. */
  payout: number;
}

const TERMS = 1000;

const zetaCache = new Map<number, number>();

/** Z(s) ≥ ζ(s): the first TERMS−1 terms exactly, the rest bounded by N^(−s) + ∫_N^∞ x^(−s) dx. Computed once per s. */
function zetaUpper(s: number): number {
  const known = zetaCache.get(s);
  if (known !== undefined) return known;
  let z = 0;
  for (let j = 1; j < TERMS; j++) z += j ** -s;
  z += TERMS ** -s + TERMS ** (1 - s) / (s - 1);
  zetaCache.set(s, z);
  return z;
}

/** γ_j (j ≥ 1) of the p-series with exponent `decay`; 0 for j < 1. Nonincreasing, Σ_j γ_j ≤ 1. */
export function gammaSequence(decay: number): (j: number) => number {
  if (!(decay > 1)) throw new RangeError(`alpha-spending decay must exceed 1 (γ must be summable), got ${decay}`);
  const z = zetaUpper(decay);
  return (j) => (j < 1 ? 0 : j ** -decay / z);
}

/**
 * The level LORD++ grants the next test, given whether each earlier test of the campaign (in order) was a discovery
 * (p ≤ its level). Pure: the same history and settings give the same grant.
 */
export function lordGrant(history: readonly boolean[], alpha: number, s: AlphaSpendingSettings): AlphaGrant {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must lie in (0, 1), got ${alpha}`);
  if (!(s.initialWealth > 0 && s.initialWealth <= 1)) throw new RangeError(`initialWealth must lie in (0, 1], got ${s.initialWealth}`);
  const gamma = gammaSequence(s.decay);
  const w0 = s.initialWealth * alpha;
  const levelAt = (t: number, discoveries: readonly number[]) => {
    let level = gamma(t) * w0;
    discoveries.forEach((tau, k) => {
      level += (k === 0 ? alpha - w0 : alpha) * gamma(t - tau);
    });
    return level;
  };
  // Replay the campaign: each test's level and, for a discovery, its payout, to the wealth before this one.
  const discoveries: number[] = [];
  let wealth = w0;
  history.forEach((discovered, i) => {
    const t = i + 1;
    wealth -= levelAt(t, discoveries);
    if (discovered) {
      wealth += discoveries.length === 0 ? alpha - w0 : alpha;
      discoveries.push(t);
    }
  });
  const index = history.length + 1;
  return {
    index,
    level: levelAt(index, discoveries),
    target: alpha,
    // Rounding can leave −1e−18 after many tests; wealth is never negative by construction.
    wealthBefore: Math.max(0, wealth),
    payout: discoveries.length === 0 ? alpha - w0 : alpha,
  };
}

/** W(t): the wealth after the granted test, a discovery or not. */
export function wealthAfter(grant: AlphaGrant, discovery: boolean): number {
  return Math.max(0, grant.wealthBefore - grant.level + (discovery ? grant.payout : 0));
}
