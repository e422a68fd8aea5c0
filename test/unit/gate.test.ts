// The promotion gate, pure: the paired tests, each check, and runGate's decision and reasons.
import { ALL_CHECKS_PASSED, DEFAULT_CHECKS, heldoutImprovement, noCategoryRegression, runGate } from '../../core/gate/checks';
import type { PairedItem } from '../../core/gate/evidence';
import type { GateEvidence } from '../../core/gate/evidence';
import type { GateCheck } from '../../core/gate/evidence';
import { mean, orientedDeltas, pairedBootstrap, pairedTest, seededUniform, signFlipTest } from '../../core/gate/paired-test';
import { gateSettingsWithDefaults, type GateMetric, type GateSettingsInput } from '../../core/gate/settings';
import { InvalidSpecError } from '../../core/spec';

function normals(seed: number, n: number): number[] {
  const u = seededUniform(seed);
  return Array.from({ length: n }, () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()));
}

/** Incumbent bits/byte per item around 2.5, spread like real loss chunks. */
function incumbentBpb(n: number, seed = 11): number[] {
  return normals(seed, n).map((z) => 2.5 + 0.3 * z);
}

function evidence(metric: GateMetric, items: PairedItem[], settings: GateSettingsInput = {}): GateEvidence {
  return {
    candidateCheckpointId: 'cand',
    incumbentCheckpointId: 'inc',
    items: { [metric]: items },
    settings: gateSettingsWithDefaults({ metric, ...settings }),
  };
}

const paired = (candidate: number[], incumbent: number[], category: (i: number) => string = () => 'typescript'): PairedItem[] =>
  candidate.map((c, i) => ({ category: category(i), candidate: c, incumbent: incumbent[i] }));

describe('the paired tests', () => {
  test('orientation: positive = better, for lower-is-better and higher-is-better scores alike', () => {
    expect(orientedDeltas([2.0, 3.0], [2.5, 2.5], false)).toEqual([0.5, -0.5]);
    expect(orientedDeltas([1, 0], [0, 0], true)).toEqual([1, 0]);
    expect(() => orientedDeltas([1], [1, 2], true)).toThrow(RangeError);
  });

  test('the exact sign-flip test enumerates every sign pattern: McNemar on 0/1 items', () => {
    expect(signFlipTest([1, 1, 1], { resamples: 2000, seed: 1 })).toMatchObject({ pValue: 1 / 8, exact: true, resamples: 0 });
    // 10 discordant items all in the candidate's favour among 200; concordant items do not count.
    const deltas = [...Array(10).fill(1), ...Array(190).fill(0)];
    expect(signFlipTest(deltas, { resamples: 2000, seed: 1 }).pValue).toBeCloseTo(1 / 1024, 12);
    expect(signFlipTest(Array(20).fill(0), { resamples: 2000, seed: 1 }).pValue).toBe(1);
    expect(signFlipTest([-1, -1, -1], { resamples: 2000, seed: 1 }).pValue).toBe(1);
  });

  test('the bootstrap and the sampled sign-flip test are deterministic for a seed', () => {
    const deltas = normals(3, 60).map((z) => 0.05 + 0.2 * z);
    const opts = { resamples: 2000, seed: 7, alpha: 0.05 };
    expect(pairedBootstrap(deltas, opts)).toEqual(pairedBootstrap(deltas, opts));
    expect(signFlipTest(deltas, opts)).toEqual(signFlipTest(deltas, opts));
    expect(signFlipTest(deltas, opts).exact).toBe(false);
    expect(pairedBootstrap(deltas, { ...opts, seed: 8 }).lowerBound).not.toBe(pairedBootstrap(deltas, opts).lowerBound);
  });

  test('the bootstrap bound sits below the mean, and both tests agree on a clear and a null effect', () => {
    const clear = normals(5, 80).map((z) => 0.1 + 0.2 * z);
    const boot = pairedBootstrap(clear, { resamples: 2000, seed: 1, alpha: 0.05 });
    expect(boot.lowerBound).toBeLessThan(boot.meanDelta);
    expect(boot.lowerBound).toBeGreaterThan(0);
    expect(boot.pValue).toBeLessThan(0.01);
    expect(pairedTest(clear, { resamples: 2000, seed: 1, alpha: 0.05, test: 'sign-flip' }).pValue).toBeLessThan(0.01);
    const nothing = normals(6, 80).map((z) => 0.2 * z);
    const centred = nothing.map((d) => d - mean(nothing));
    expect(pairedTest(centred, { resamples: 2000, seed: 1, alpha: 0.05, test: 'sign-flip' }).pValue).toBeGreaterThan(0.2);
    expect(pairedTest(centred, { resamples: 2000, seed: 1, alpha: 0.05, test: 'bootstrap' }).pValue).toBeGreaterThan(0.2);
  });

  test('the sign-flip test holds its level on null data (type-I rate near alpha, not above it)', () => {
    let rejections = 0;
    const trials = 200;
    for (let t = 0; t < trials; t++) {
      const deltas = normals(1000 + t, 30).map((z) => 0.3 * z);
      if (signFlipTest(deltas, { resamples: 500, seed: t }).pValue < 0.05) rejections++;
    }
    expect(rejections / trials).toBeLessThan(0.1);
  });
});

describe('the promotion gate', () => {
  test('a candidate better by a clear margin on most items is promoted', () => {
    const inc = incumbentBpb(40);
    const jitter = normals(12, 40);
    const cand = inc.map((x, i) => x - 0.1 + 0.05 * jitter[i]);
    const outcome = runGate(evidence('bits_per_byte', paired(cand, inc)));
    expect(outcome.promote).toBe(true);
    expect(outcome.rule).toBe(ALL_CHECKS_PASSED);
    const primary = outcome.results[0];
    expect(primary.figures.meanDelta as number).toBeGreaterThan(0.08);
    expect(primary.figures.pValue as number).toBeLessThan(0.001);
    expect(outcome.results.map((r) => r.rule)).toEqual([
      'heldoutImprovement',
      'heldoutAboveNoise',
      'noCategoryRegression',
      'publicHeldoutGap',
      'heldoutOutrunsPublic',
      'twinGap',
      'cheatOnlyPass',
      'canaryInOutputs',
      'heldoutCanaryInOutputs',
    ]);
  });

  test('the gate rejects a candidate that is only better by noise', () => {
    const inc = incumbentBpb(40);
    const noise = normals(13, 40).map((z) => 0.4 * z);
    const centred = noise.map((z) => z - mean(noise));
    // Lower is better: the candidate's mean bits/byte is 0.025 below the incumbent's, above the 0.02 margin.
    const cand = inc.map((x, i) => x + centred[i] - 0.025);
    const outcome = runGate(evidence('bits_per_byte', paired(cand, inc)));
    const primary = outcome.results[0];
    expect(primary.figures.meanDelta as number).toBeGreaterThanOrEqual(0.02);
    expect(primary.figures.pValue as number).toBeGreaterThan(0.05);
    expect(outcome.promote).toBe(false);
    expect(outcome.rule).toBe('heldoutImprovement');
    expect(outcome.reason).toMatch(/^rejected by heldoutImprovement: .*not significant/);
  });

  test('a significant improvement smaller than the margin is rejected', () => {
    const inc = incumbentBpb(40);
    const cand = inc.map((x, i) => x - 0.01 + 0.001 * normals(14, 40)[i]);
    const outcome = runGate(evidence('bits_per_byte', paired(cand, inc)));
    expect(outcome.results[0].figures.pValue as number).toBeLessThan(0.05);
    expect(outcome.promote).toBe(false);
    expect(outcome.reason).toMatch(/below the margin/);
  });

  test('a big improvement overall with one category regressing past the bound is rejected naming that category', () => {
    const category = (i: number) => ['typescript', 'javascript', 'other'][i % 3];
    const inc = incumbentBpb(60);
    const jitter = normals(15, 60);
    const cand = inc.map((x, i) => (category(i) === 'javascript' ? x + 0.1 : x - 0.3) + 0.02 * jitter[i]);
    const outcome = runGate(evidence('bits_per_byte', paired(cand, inc, category)));
    expect(outcome.results[0].passed).toBe(true);
    expect(outcome.promote).toBe(false);
    expect(outcome.rule).toBe('noCategoryRegression');
    expect(outcome.reason).toMatch(/category "javascript" is worse on held-out bits_per_byte by 0\.1\d+ \(bound 0\.05, 20 items\)/);
    expect(outcome.results.find((r) => r.rule === 'noCategoryRegression')!.figures).toMatchObject({
      worstCategory: 'javascript',
      worstMetric: 'bits_per_byte',
      'bits_per_byte.javascript.n': 20,
    });
  });

  test('every metric with scores is checked per category, and categories with few items are reported, not gated', () => {
    const inc = incumbentBpb(40);
    const cand = inc.map((x) => x - 0.2);
    // Exact match: "number" (4 items) gets everything wrong, "identifier" (30 items) loses 6 of 30.
    const em: PairedItem[] = [
      ...Array.from({ length: 4 }, () => ({ category: 'number', candidate: 0, incumbent: 1 })),
      ...Array.from({ length: 30 }, (_, i) => ({ category: 'identifier', candidate: i < 6 ? 0 : 1, incumbent: 1 })),
    ];
    const e: GateEvidence = {
      ...evidence('bits_per_byte', paired(cand, inc)),
      items: { bits_per_byte: paired(cand, inc), exact_match: em },
    };
    const result = noCategoryRegression(e);
    expect(result.passed).toBe(false);
    expect(result.reason).toMatch(/"identifier" is worse on held-out exact_match by 0\.2000/);
    expect(result.reason).not.toMatch(/"number"/);
    expect(result.figures['exact_match.number.delta']).toBe(-1);
    expect(result.figures['exact_match.number.n']).toBe(4);
  });

  test('exact match is higher-is-better: the same numbers read the other way round', () => {
    const inc = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 1 : 0));
    const cand = inc.map((x, i) => (i % 5 === 1 ? 1 : x)); // 40 more items right, none lost
    expect(
      runGate(
        evidence(
          'exact_match',
          paired(cand, inc, () => 'identifier'),
        ),
      ).promote,
    ).toBe(true);
    expect(
      runGate(
        evidence(
          'exact_match',
          paired(inc, cand, () => 'identifier'),
        ),
      ).promote,
    ).toBe(false);
    expect(heldoutImprovement(evidence('exact_match', paired(cand, inc))).figures.exact).toBe('no');
  });

  test('no scores for the primary metric is a rejection, not a crash', () => {
    const outcome = runGate({ candidateCheckpointId: 'c', incumbentCheckpointId: 'i', items: {}, settings: gateSettingsWithDefaults() });
    expect(outcome).toMatchObject({ promote: false, rule: 'heldoutImprovement' });
    expect(outcome.reason).toMatch(/no held-out bits_per_byte scores/);
  });

  test('adding a check is adding one function; the reason names the first failing rule', () => {
    const inc = incumbentBpb(40);
    const e = evidence(
      'bits_per_byte',
      paired(
        inc.map((x) => x - 0.2),
        inc,
      ),
    );
    const probes: GateCheck = () => ({ rule: 'probesClean', passed: false, reason: '2 canaries answered', figures: { canaries: 2 } });
    const outcome = runGate(e, [...DEFAULT_CHECKS, probes]);
    expect(outcome).toMatchObject({ promote: false, rule: 'probesClean', reason: 'rejected by probesClean: 2 canaries answered' });
    expect(outcome.results).toHaveLength(DEFAULT_CHECKS.length + 1);
    expect(() => runGate(e, [])).toThrow(RangeError);
  });
});

describe('gate settings', () => {
  test('defaults fill every field; bad values are spec errors', () => {
    expect(gateSettingsWithDefaults()).toEqual({
      metric: 'bits_per_byte',
      margin: 0.02,
      alpha: 0.05,
      maxCategoryRegression: { bits_per_byte: 0.05, exact_match: 0.05 },
      minCategoryItems: 10,
      test: 'sign-flip',
      resamples: 2000,
      seed: 1,
      maxGapGrowth: { bits_per_byte: 0.25, exact_match: 0.2 },
      maxTwinGapGrowth: 0.25,
      heldoutOutrunSigmas: 3,
      heldoutOutrun: 'reject',
      noise: { enabled: true, seeds: 3, sigmas: 2 },
      heldoutBudget: { enabled: true, queries: 20, threshold: 3, noiseScale: 0.25 },
      alphaSpending: { enabled: true, initialWealth: 0.5, decay: 1.5 },
    });
    expect(gateSettingsWithDefaults({ maxCategoryRegression: { exact_match: 0.1 } }).maxCategoryRegression).toEqual({
      bits_per_byte: 0.05,
      exact_match: 0.1,
    });
    expect(() => gateSettingsWithDefaults({ alpha: 1.5 })).toThrow(InvalidSpecError);
    expect(() => gateSettingsWithDefaults({ heldoutOutrunSigmas: 0 })).toThrow(InvalidSpecError);
    expect(() => gateSettingsWithDefaults({ heldoutOutrun: 'warn' } as never)).toThrow(InvalidSpecError);
    expect(() => gateSettingsWithDefaults({ marginn: 0.1 } as GateSettingsInput)).toThrow(/promotion settings is invalid/);
  });
});
