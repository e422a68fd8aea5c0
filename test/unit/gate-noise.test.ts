// The gate's own noise, pure (core/gate/noise-check.ts): σ from seed reruns and from items, a gain inside the stated
// multiple refused and one outside it promoted, the figures every decision records, and the settings.
import { DEFAULT_CHECKS, runGate } from '../../core/gate/checks';
import type { GateEvidence, PairedItem } from '../../core/gate/evidence';
import {
  gateNoiseOf,
  heldoutAboveNoise,
  noiseLine,
  noiseOf,
  noiseSummaryOf,
  NOISE_RULE,
  satterthwaite,
  seedSpread,
} from '../../core/gate/noise-check';
import { normalCdf, studentTCdf, studentTQuantile, tMultiple } from '../../core/gate/student-t';
import { mean, seededUniform } from '../../core/gate/paired-test';
import { gateSettingsWithDefaults, type GateSettingsInput } from '../../core/gate/settings';
import { InvalidSpecError } from '../../core/spec';

function normals(seed: number, n: number): number[] {
  const u = seededUniform(seed);
  return Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()));
}

/** 200 loss items: the incumbent around 2.5 bits per byte; the candidate better by `gain` with per-item noise 0.05. */
function evidence(gain: number, seedScores: number[], settings: GateSettingsInput = {}, seed = 3): GateEvidence {
  const inc = normals(seed, 200).map((z) => 2.5 + 0.3 * z);
  const noise = normals(seed + 100, 200);
  const items: PairedItem[] = inc.map((b, i) => ({ category: `c${i % 4}`, incumbent: b, candidate: b - gain + 0.05 * noise[i] }));
  return {
    candidateCheckpointId: 'cand',
    incumbentCheckpointId: 'inc',
    items: { bits_per_byte: items },
    settings: gateSettingsWithDefaults({ margin: 0, ...settings }),
    seedScores,
  };
}

// Held-out bits per byte of three seed reruns of one recipe: sd 0.02.
const SEEDS = [2.48, 2.5, 2.52];

test('σ combines the seed reruns and the items: √(2σ_seed² + σ_items²), σ_seed once against the untrained baseline', () => {
  const n = noiseOf([0.1, 0.3, 0.2, 0.4], [1, 2, 3], 2, 3);
  expect(n.sigmaSeed).toBeCloseTo(1, 12);
  expect(n.sigmaItems).toBeCloseTo(Math.sqrt(((0.1 - 0.25) ** 2 + 0.05 ** 2 * 2 + 0.15 ** 2) / 3 / 4), 12);
  // Δ is a difference of two models that are each one seed's draw: the seed spread counts for both.
  expect(n.sigma).toBeCloseTo(Math.sqrt(2 * n.sigmaSeed ** 2 + n.sigmaItems ** 2), 12);
  expect(n).toMatchObject({ delta: 0.25, sigmas: 2, seedsAsked: 3, seedsScored: 3, seededModels: 2 });
  // Against the untrained baseline (no seed's draw) only the candidate's counts.
  const once = noiseOf([0.1, 0.3, 0.2, 0.4], [1, 2, 3], 2, 3, 1);
  expect(once.sigma).toBeCloseTo(Math.hypot(once.sigmaSeed, once.sigmaItems), 12);
  expect(heldoutAboveNoise({ ...evidence(0.03, SEEDS), incumbentUntrained: true }).reason).toMatch(
    /σ_seed counted once: the incumbent is the untrained baseline\): within noise$/,
  );
  // One scored rerun measures no spread.
  expect(noiseOf([0.1, 0.3], [2], 2, 3)).toMatchObject({ sigmaSeed: 0, seedsScored: 1 });
});

test('Student t quantiles match the tables; the multiple keeps the normal tail', () => {
  // Two-sided 95% (one-sided 0.975) from the standard tables, and a few more.
  expect(studentTQuantile(0.975, 2)).toBeCloseTo(4.303, 3);
  expect(studentTQuantile(0.975, 10)).toBeCloseTo(2.228, 3);
  expect(studentTQuantile(0.95, 1)).toBeCloseTo(6.314, 3);
  expect(studentTQuantile(0.995, 30)).toBeCloseTo(2.75, 3);
  expect(studentTQuantile(0.025, 4)).toBeCloseTo(-2.776, 3);
  expect(studentTCdf(-1, 3)).toBeCloseTo(0.1955, 5);
  expect(normalCdf(2)).toBeCloseTo(0.97725, 5);
  // 2σ as a t multiple: about 4.53 at 2 df, near 2 with many, exactly the stated multiple at df = ∞.
  expect(tMultiple(2, 2)).toBeCloseTo(4.527, 2);
  expect(tMultiple(2, 1000)).toBeCloseTo(2.006, 2);
  expect(tMultiple(2, Infinity)).toBe(2);
  expect(studentTCdf(tMultiple(2, 3.7), 3.7)).toBeCloseTo(normalCdf(2), 9);
});

test('Welch–Satterthwaite degrees of freedom: σ_seed with k − 1, σ_items with n − 1, combined', () => {
  // One part alone keeps its own df; equal parts with equal df add their df.
  expect(satterthwaite([[0.0008, 2]])).toBeCloseTo(2, 12);
  expect(
    satterthwaite([
      [1, 4],
      [1, 4],
    ]),
  ).toBeCloseTo(8, 12);
  // (a + b)² / (a²/ν_a + b²/ν_b): a part not measured (0) adds nothing; nothing measured is 0.
  expect(
    satterthwaite([
      [2, 2],
      [1, 99],
    ]),
  ).toBeCloseTo(9 / (4 / 2 + 1 / 99), 12);
  expect(
    satterthwaite([
      [0, 2],
      [1, 99],
    ]),
  ).toBeCloseTo(99, 12);
  expect(
    satterthwaite([
      [0, 2],
      [0, 0],
    ]),
  ).toBe(0);
  // noiseOf: m·σ_seed² with k − 1 = 2, σ_items² with n − 1 = 3; the multiple is the t quantile at that df.
  const n = noiseOf([0.1, 0.3, 0.2, 0.4], [1, 2, 3], 2, 3);
  const seedPart = 2 * n.sigmaSeed ** 2;
  const itemsPart = n.sigmaItems ** 2;
  expect(n.df).toBeCloseTo((seedPart + itemsPart) ** 2 / (seedPart ** 2 / 2 + itemsPart ** 2 / 3), 9);
  expect(n.multiple).toBeCloseTo(tMultiple(2, n.df), 12);
  // No reruns: the items' df alone, n − 1.
  expect(noiseOf([0.1, 0.3, 0.2, 0.4], [], 2, 0).df).toBeCloseTo(3, 12);
  // The one-line summary names the multiple and df; a decision recorded before them shows the stated multiple.
  const summary = noiseSummaryOf(n, true);
  expect(noiseLine(summary)).toMatch(/^Δ 0\.2500 vs \d+\.\d\dσ \(2σ as t, df 2\.\d\) \d+\.\d{4} \(σ /);
  const { df: _df, multiple: _multiple, ...before } = summary;
  expect(noiseLine({ ...before, bound: 2 * summary.sigma })).toMatch(/^Δ 0\.2500 vs 2σ /);
});

test('a gain inside 2σ is refused: significant on items, within the seed spread', () => {
  // σ_items ≈ 0.05/√200 ≈ 0.0035, σ_seed = 0.02: σ = √(2 · 0.02² + 0.0035²) ≈ 0.0285; σ_seed dominates and has 2
  // degrees of freedom, so 2σ as a t multiple is about 4.4σ ≈ 0.125. A gain of 0.03 passes the paired test easily.
  const e = evidence(0.03, SEEDS);
  const out = runGate(e);
  expect(out.promote).toBe(false);
  expect(out.rule).toBe(NOISE_RULE);
  const check = out.results.find((r) => r.rule === 'heldoutImprovement')!;
  expect(check.passed).toBe(true); // the paired test alone would promote it
  const noise = out.results.find((r) => r.rule === NOISE_RULE)!;
  expect(noise.figures.sigmaSeed).toBeCloseTo(0.02, 6);
  expect(noise.figures.bound as number).toBeGreaterThan(0.12);
  expect(noise.reason).toMatch(
    /^held-out bits_per_byte improves by Δ = 0\.0\d{3}; 4\.\d\dσ \(2σ as t, df 2\.\d\) = 0\.1\d{3} \(σ = 0\.02\d\d: σ_seed 0\.0200 from 3 seed reruns, σ_items 0\.00\d\d; σ_seed counted for both models\): within noise$/,
  );
});

test('a gain outside 2σ is promoted, and the decision records σ in both parts, the multiple and Δ', () => {
  // 0.15 ≈ 5.3σ clears the t multiple (≈ 4.4σ at df ≈ 2); 0.08 ≈ 2.8σ, above a normal 2σ, no longer does (below).
  const out = runGate(evidence(0.15, SEEDS));
  expect(out).toMatchObject({ promote: true });
  const noise = out.results.find((r) => r.rule === NOISE_RULE)!;
  expect(noise.passed).toBe(true);
  expect(Object.keys(noise.figures).sort()).toEqual(
    [
      'bound',
      'claim',
      'clusters',
      'delta',
      'df',
      'multiple',
      'weighting',
      'seededModels',
      'seedsAsked',
      'seedsScored',
      'sigma',
      'sigmaItems',
      'sigmaSeed',
      'sigmas',
    ].sort(),
  );
  expect(noise.figures.delta as number).toBeGreaterThan(noise.figures.bound as number);
  // With σ_seed from 3 reruns, 2.8σ is within the seed spread's own uncertainty: refused.
  expect(heldoutAboveNoise(evidence(0.08, SEEDS)).passed).toBe(false);
});

test('the multiple is the stated one: the same gain passes at 1σ and fails at 3σ', () => {
  expect(heldoutAboveNoise(evidence(0.05, SEEDS, { noise: { sigmas: 1 } })).passed).toBe(true);
  expect(heldoutAboveNoise(evidence(0.05, SEEDS, { noise: { sigmas: 3 } })).passed).toBe(false);
});

test('without seed reruns the spread is the items alone, and the decision says so', () => {
  const r = heldoutAboveNoise(evidence(0.03, [], { noise: { seeds: 0 } }));
  expect(r.passed).toBe(true);
  expect(r.reason).toContain('no seed reruns asked (σ_seed = 0)');
  const one = heldoutAboveNoise(evidence(0.03, [2.5]));
  expect(one.reason).toContain('σ_seed not measured: 1 of 3 seed reruns scored (σ_seed = 0)');
});

test('off, the check passes and says so, still recording the figures', () => {
  const r = heldoutAboveNoise(evidence(0.001, SEEDS, { noise: { enabled: false } }));
  expect(r).toMatchObject({ passed: true, reason: 'the noise check is off (promotion.noise.enabled: false)' });
  expect(r.figures.enabled).toBe('no');
  expect(r.figures.sigmaSeed).toBeCloseTo(0.02, 6);
});

test('a loss-metric regression is never above noise; no scores is a refusal', () => {
  expect(heldoutAboveNoise(evidence(-0.05, SEEDS)).passed).toBe(false);
  const e = evidence(0.1, SEEDS);
  expect(heldoutAboveNoise({ ...e, items: {} })).toMatchObject({ passed: false, figures: { n: 0 } });
});

test('the noise check runs second, after the paired test, in the default checks', () => {
  expect(DEFAULT_CHECKS[1]).toBe(heldoutAboveNoise);
});

test('settings: defaults k = 3, 2σ, on; bad values are spec errors', () => {
  expect(gateSettingsWithDefaults({}).noise).toEqual({ enabled: true, seeds: 3, sigmas: 2 });
  expect(() => gateSettingsWithDefaults({ noise: { seeds: -1 } })).toThrow(InvalidSpecError);
  expect(() => gateSettingsWithDefaults({ noise: { sigmas: -2 } })).toThrow(InvalidSpecError);
  expect(() => gateSettingsWithDefaults({ noise: { k: 3 } } as never)).toThrow(InvalidSpecError);
});

test('per-item seed noise is counted once: η, the per-item part of σ_seed, leaves the seed term (σ_items has it)', () => {
  // 300 items, k = 3 reruns: item j's score is μ_j + γ_r + ε_rj.
  const n = 300;
  const mu = normals(41, n).map((z) => 2.5 + 0.3 * z);
  const eps = [normals(42, n), normals(43, n), normals(44, n)];
  const reruns = (shifts: number[], tau: number) => mu.map((m, j) => shifts.map((g, r) => m + g + tau * eps[r][j]));
  const deltas = normals(45, n).map((z) => 0.01 + 0.1 * z);
  // No shared shift, only per-item noise: σ_seed is nearly all η, and the seed term nearly vanishes.
  const perItemOnly = noiseOf(deltas, [], 2, 3, 2, { seedItems: reruns([0, 0, 0], 0.2) });
  expect(perItemOnly.sigmaSeedPerItem!).toBeGreaterThan(0.5 * perItemOnly.sigmaSeed);
  expect(perItemOnly.sigma).toBeLessThan(Math.sqrt(2 * perItemOnly.sigmaSeed ** 2 + perItemOnly.sigmaItems ** 2));
  // A pure shift (every item moves with the seed alike): η = 0 and the seed term is σ_seed whole.
  const shiftOnly = noiseOf(deltas, [], 2, 3, 2, { seedItems: reruns([-0.02, 0, 0.02], 0) });
  expect(shiftOnly.sigmaSeed).toBeCloseTo(0.02, 9);
  expect(shiftOnly.sigmaSeedPerItem!).toBeCloseTo(0, 9);
  expect(shiftOnly.sigmaSeedShift!).toBeCloseTo(0.02, 9);
  expect(shiftOnly.sigma).toBeCloseTo(Math.sqrt(2 * 0.02 ** 2 + shiftOnly.sigmaItems ** 2), 9);
  // η² with equal weights and one cluster per item is the two-way ANOVA's residual mean square over n.
  const x = reruns([-0.01, 0.005, 0.01], 0.2);
  const rowMeans = [0, 1, 2].map((r) => mean(x.map((xi) => xi[r])));
  const grand = mean(rowMeans);
  let ss = 0;
  x.forEach((xi) => xi.forEach((v, r) => (ss += (v - mean(xi) - (rowMeans[r] - grand)) ** 2)));
  const spread = seedSpread(x)!;
  expect(spread.perItem ** 2).toBeCloseTo(ss / (2 * (n - 1)) / n, 12);
  expect(spread.scores).toEqual(rowMeans.map((m) => expect.closeTo(m, 12)));
  expect(spread.df).toBe(2 * (n - 1));
  // σ_seed nearly all η and σ_items small: the df stays at least min(k − 1, G − 1) and the multiple finite (carrying
  // η's subtraction into the df sent it towards 0 and the multiple to 10^8 on the bench's honest candidates).
  const quiet = noiseOf(
    deltas.map((d) => 0.01 + d / 100),
    [],
    2,
    3,
    2,
    { seedItems: reruns([0, 0, 0], 0.2) },
  );
  expect(quiet.df).toBeGreaterThanOrEqual(2 - 1e-9);
  expect(quiet.multiple).toBeLessThanOrEqual(tMultiple(2, 2) + 1e-9);
  // Without the per-item scores the sum stays as before (η in both terms: conservative).
  const before = noiseOf(deltas, spread.scores, 2, 3);
  expect(before.sigmaSeedPerItem).toBeUndefined();
  expect(before.sigma).toBeCloseTo(Math.sqrt(2 * before.sigmaSeed ** 2 + before.sigmaItems ** 2), 12);
});

test('the decision says which claim it makes: recipe with σ_seed in the bar, checkpoint without', () => {
  const summary = (e: GateEvidence) => noiseSummaryOf(gateNoiseOf(e)!, e.settings.noise.enabled);
  expect(summary(evidence(0.03, SEEDS)).claim).toBe('recipe');
  expect(summary(evidence(0.03, [], { noise: { seeds: 0 } })).claim).toBe('checkpoint');
  expect(summary(evidence(0.03, [2.5])).claim).toBe('checkpoint');
  expect(summary(evidence(0.03, SEEDS, { noise: { enabled: false } })).claim).toBe('checkpoint');
  expect(noiseLine(summary(evidence(0.03, SEEDS)))).toMatch(/ over 200 clusters; recipe claim\): within noise$/);
});
