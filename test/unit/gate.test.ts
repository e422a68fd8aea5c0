// The promotion gate, pure: the paired tests, each check, and runGate's decision and reasons.
import { ALL_CHECKS_PASSED, DEFAULT_CHECKS, heldoutImprovement, noCategoryRegression, runGate } from '../../core/gate/checks';
import type { PairedItem } from '../../core/gate/evidence';
import type { GateEvidence } from '../../core/gate/evidence';
import type { GateCheck } from '../../core/gate/evidence';
import {
  clusterDeltas,
  clusteredMean,
  mean,
  orientedDeltas,
  pairedBootstrap,
  pairedTest,
  sampleVariance,
  seededUniform,
  signFlipTest,
} from '../../core/gate/paired-test';
import { wantedAnchor } from '../../core/gate/category-anchor';
import { referenceControlOf } from '../../core/gate/reference-control';
import { layoutOf } from '../../core/gate/item-layout';
import { gateNoiseOf } from '../../core/gate/noise-check';
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

describe('clusters and weighting (issue 33: items cut from one file are not independent; one weighting, stated)', () => {
  const opts = { resamples: 2000, seed: 1, alpha: 0.05, test: 'sign-flip' as const };

  test('one cluster per item with unit weights is exactly the item-level test', () => {
    for (const n of [10, 40]) {
      const d = normals(5 + n, n).map((z) => 0.02 + 0.05 * z);
      const singletons = { clusters: d.map((_, i) => `f${i}`), weights: d.map(() => 1) };
      expect(clusterDeltas(d, singletons)).toEqual(d);
      expect(pairedTest(clusterDeltas(d, singletons), opts)).toEqual(pairedTest(d, opts));
      const c = clusteredMean(d, singletons);
      expect(c.clusters).toBe(n);
      expect(c.se).toBeCloseTo(Math.sqrt(sampleVariance(d) / n), 12);
    }
    // In the gate: items that carry a source, with clusterBy: item, decide as items without one.
    const inc = incumbentBpb(60);
    const items = paired(
      inc.map((b, i) => b - 0.03 + 0.05 * normals(8, 60)[i]),
      inc,
    );
    const sourced = items.map((i, k) => ({ ...i, cluster: `file${k % 3}.ts` }));
    const plain = heldoutImprovement(evidence('bits_per_byte', items));
    const byItem = heldoutImprovement(evidence('bits_per_byte', sourced, { clusterBy: 'item' }));
    // The same decision and figures, but the record says the items came from 3 files and were counted as independent.
    const { sources, ...byItemFigures } = byItem.figures;
    expect({ ...plain.figures, sources: 0 }).toEqual({ ...byItemFigures, sources: 0 });
    expect(sources).toBe(3);
    expect(byItem.passed).toBe(plain.passed);
    expect(byItem.reason).toBe(
      plain.reason.replace(
        ' over 60 items:',
        ' over 60 items (cut from 3 source files, counted as independent items: promotion.clusterBy: source flips each file as one):',
      ),
    );
    expect(plain.figures).toMatchObject({ n: 60, clusters: 60, sources: 0, weighting: 'items' });
  });

  test('items that move together within their file: the cluster test is far less sure than the item test', () => {
    // 5 files of 8 items; each file's items share one shift (two files got worse), plus small per-item noise.
    const shifts = [0.3, 0.2, -0.1, 0.25, -0.05];
    const noise = normals(21, 40);
    const items: PairedItem[] = noise.map((z, k) => ({
      category: 'code',
      incumbent: 0,
      candidate: shifts[Math.floor(k / 8)] + 0.02 * z,
      cluster: `file${Math.floor(k / 8)}.ts`,
    }));
    const settings = { margin: 0, noise: { enabled: false } };
    const byItem = heldoutImprovement(evidence('pass_rate', items, { ...settings, clusterBy: 'item' }));
    const bySource = heldoutImprovement(evidence('pass_rate', items, { ...settings, clusterBy: 'source' }));
    expect(byItem.figures.pValue as number).toBeLessThan(0.01);
    expect(byItem.passed).toBe(true);
    // 5 clusters: 2^5 sign patterns, exact; at least 4 of 32 are as extreme.
    expect(bySource.figures).toMatchObject({ clusters: 5, n: 40, exact: 'yes' });
    expect(bySource.figures.pValue as number).toBeGreaterThan(0.05);
    expect(bySource.passed).toBe(false);
    expect(bySource.reason).toMatch(/over 40 items in 5 clusters: not significant/);
    expect(bySource.figures.meanDelta).toBeCloseTo(byItem.figures.meanDelta as number, 12);
    // The noise check's σ_items is the clusters' too: wider, with G − 1 = 4 df.
    const n = gateNoiseOf(evidence('pass_rate', items, { noise: { seeds: 0 }, clusterBy: 'source' }))!;
    const flat = gateNoiseOf(evidence('pass_rate', items, { noise: { seeds: 0 }, clusterBy: 'item' }))!;
    expect(n.clusters).toBe(5);
    expect(n.df).toBeCloseTo(4, 9);
    expect(n.sigmaItems).toBeGreaterThan(2 * flat.sigmaItems);
  });

  test('auto clusters by source only when the items name two or more files; no clusterBy pairs items', () => {
    const items = [0, 1, 2, 3, 4, 5].map((k) => ({ cluster: `file${k % 3}.ts` }));
    expect(layoutOf(items, 'pass_rate', 'auto')).toMatchObject({ clusterCount: 3, sourceCount: 3 });
    expect(layoutOf(items, 'pass_rate', 'source')).toMatchObject({ clusterCount: 3, sourceCount: 3 });
    // One generator named on every item (the arithmetic task) says nothing about which items are alike.
    const one = items.map(() => ({ cluster: 'tasks/arithmetic' }));
    expect(layoutOf(one, 'pass_rate', 'auto')).toMatchObject({ clusterCount: 6, sourceCount: 1 });
    expect(layoutOf(one, 'pass_rate', 'source')).toMatchObject({ clusterCount: 1, sourceCount: 1 });
    expect(layoutOf(items, 'pass_rate')).toMatchObject({ clusterCount: 6, sourceCount: 3 });
    expect(layoutOf(items, 'pass_rate').clusters).toBeUndefined();
  });

  test('a suite of too few clusters for the level: the decision says no candidate could pass on it', () => {
    // 4 files, every one better: the least p of a sign-flip over 4 units is 1/16 > 0.05.
    const items: PairedItem[] = Array.from({ length: 20 }, (_, k) => ({
      category: 'code',
      incumbent: 0,
      candidate: 0.5,
      cluster: `file${k % 4}.ts`,
    }));
    const settings = { margin: 0, noise: { enabled: false }, clusterBy: 'source' as const };
    const r = heldoutImprovement(evidence('pass_rate', items, settings));
    expect(r.passed).toBe(false);
    expect(r.figures).toMatchObject({ clusters: 4, pValue: 0.0625 });
    expect(r.reason).toContain(
      'in 4 clusters (the least p a sign-flip over 4 units can give is 2^-4 = 0.0625, not below 0.0500: this suite cannot show an improvement; it needs items from more source files): not significant',
    );
    // With enough files it can, and says nothing of the kind.
    const many = items.map((i, k) => ({ ...i, cluster: `file${k}.ts` }));
    const ok = heldoutImprovement(evidence('pass_rate', many, settings));
    expect(ok.passed).toBe(true);
    expect(ok.reason).not.toContain('cannot show');
  });

  test('bits per byte is byte-weighted in the test and its means, like the suite figure; shares of items are not', () => {
    // One long item got much worse, four short ones a little better: unweighted the candidate gains, by bytes it loses.
    const items: PairedItem[] = [
      { category: 'code', incumbent: 2, candidate: 2.5, bytes: 1000 },
      ...[0, 1, 2, 3].map(() => ({ category: 'code', incumbent: 2, candidate: 1.8, bytes: 10 })),
    ];
    const r = heldoutImprovement(evidence('bits_per_byte', items, { margin: 0 }));
    expect(r.figures.weighting).toBe('bytes');
    const bits = (f: (i: PairedItem) => number) => items.reduce((s, i) => s + f(i) * i.bytes!, 0) / 1040;
    expect(r.figures.candidateMean).toBeCloseTo(
      bits((i) => i.candidate),
      6,
    );
    expect(r.figures.meanDelta).toBeCloseTo(-(bits((i) => i.candidate) - 2), 6);
    expect(r.figures.meanDelta as number).toBeLessThan(0);
    // An item without a byte count: the items' plain mean, and the figures say so.
    const unweighed = heldoutImprovement(
      evidence(
        'bits_per_byte',
        items.map(({ bytes: _b, ...i }) => i),
        { margin: 0 },
      ),
    );
    expect(unweighed.figures).toMatchObject({ weighting: 'items' });
    expect(unweighed.figures.meanDelta as number).toBeGreaterThan(0);
    // exact_match ignores bytes: one item one vote.
    expect(layoutOf(items, 'exact_match', 'source')).toMatchObject({ weighting: 'items', clusterCount: 5 });
    expect(layoutOf(items, 'exact_match', 'source').weights).toBeUndefined();
  });
});

describe('category bounds against a fixed anchor (issue 33: losses must not compound)', () => {
  // One category of 1000 exact-match items; `share` of them passed.
  const passed = (share: number) => Array.from({ length: 1000 }, (_, i) => (i < Math.round(share * 1000) ? 1 : 0));

  test('0.997 → 0.983 → 0.943: each step passes against the incumbent, the second fails against the anchor', () => {
    const [first, second, third] = [passed(0.997), passed(0.983), passed(0.943)];
    const step = (candidate: number[], incumbent: number[], anchor?: number[]) =>
      noCategoryRegression({
        ...evidence(
          'exact_match',
          candidate.map((c, i) => ({
            category: 'no-carry',
            candidate: c,
            incumbent: incumbent[i],
            ...(anchor ? { anchor: anchor[i] } : {}),
          })),
        ),
        ...(anchor ? { anchor: { checkpointId: 'first', source: 'first-promotion' as const } } : {}),
      });
    // Step one: the incumbent is the first promotion, the anchor itself.
    expect(step(second, first).passed).toBe(true);
    // Step two, against the incumbent alone (as before anchors): a 0.04 loss inside the 0.05 bound.
    expect(step(third, second).passed).toBe(true);
    // Against the anchor: 0.054 lost since the first promotion.
    const anchored = step(third, second, first);
    expect(anchored.passed).toBe(false);
    expect(anchored.reason).toBe(
      'category "no-carry" is worse on held-out exact_match than the anchor first by 0.0540 (bound 0.05, 1000 items)',
    );
    expect(anchored.figures).toMatchObject({
      'exact_match.no-carry.delta': -0.04,
      'exact_match.no-carry.anchorDelta': -0.054,
      anchor: 'first',
      anchorSource: 'first-promotion',
    });
  });

  test("the seed reruns as reference: independent with Flywheel's own trainer, blind with the campaign's own command", () => {
    expect(referenceControlOf('builtin')).toMatch(/^independent: /);
    expect(referenceControlOf('hf')).toMatch(/^independent: /);
    expect(referenceControlOf(['python3', 'train.py'])).toBe("blind: the reruns share the candidate's trainer");
  });

  test('the anchor wanted: the setting, else the first promotion, else the incumbent', () => {
    expect(wantedAnchor('pinned', 'first', 'inc')).toEqual({ checkpointId: 'pinned', source: 'setting' });
    expect(wantedAnchor(undefined, 'first', 'inc')).toEqual({ checkpointId: 'first', source: 'first-promotion' });
    expect(wantedAnchor(undefined, undefined, 'inc')).toEqual({ checkpointId: 'inc', source: 'incumbent' });
  });
});
