// The gate's distrust of held-out gains that outrun public ones, pure: heldoutOutrunsPublic's bound comes from the
// two splits' per-item spread (it passes honest noise, rejects or holds a real outrun, and grows with the spread),
// and held-out canaries: held-out text only, caught by heldoutCanaryInOutputs.
import { buildHeldoutCanaries, HELDOUT_CANARY_SHOWN } from '../../tasks/builtin-code/heldout-canaries';
import { buildBuiltinProbes } from '../../tasks/builtin-code/probes';
import { runGate } from '../../core/gate/checks';
import type { PairedItem } from '../../core/gate/evidence';
import type { GateEvidence } from '../../core/gate/evidence';
import { heldoutCanaryInOutputs, heldoutOutrunsPublic } from '../../core/gate/integrity-checks';
import type { IntegrityEvidence } from '../../core/gate/evidence';
import { mean, sampleVariance, seededUniform } from '../../core/gate/paired-test';
import { gateSettingsWithDefaults, type GateSettingsInput } from '../../core/gate/settings';

/** Normal draws (Box–Muller over the gate's own seeded uniform). */
function normals(seed: number, n: number, mu: number, sd: number): number[] {
  const u = seededUniform(seed);
  return Array.from({ length: n }, () => mu + sd * Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u()));
}

/**
 * Bits-per-byte evidence from per-item gains (positive = better): the incumbent scores 3.0 on every item, the
 * candidate 3.0 − gain. Held-out gains become the gate's paired items; public ones its means and spread.
 */
function evidence(
  heldoutGains: number[],
  publicGains: number[],
  settings: GateSettingsInput = {},
  extra: IntegrityEvidence = {},
): GateEvidence {
  const items: PairedItem[] = heldoutGains.map((g) => ({ category: 'typescript', candidate: 3 - g, incumbent: 3 }));
  return {
    candidateCheckpointId: 'cand',
    incumbentCheckpointId: 'inc',
    items: { bits_per_byte: items },
    settings: gateSettingsWithDefaults({ margin: 0, minCategoryItems: 1000, ...settings }),
    integrity: {
      means: [
        {
          metric: 'bits_per_byte',
          candidatePublic: 3 - mean(publicGains),
          incumbentPublic: 3,
          candidateHeldout: 3 - mean(heldoutGains),
          incumbentHeldout: 3,
          publicSpread: { n: publicGains.length, variance: sampleVariance(publicGains) },
        },
      ],
      ...extra,
    },
  };
}

describe('heldoutOutrunsPublic', () => {
  test('passes honest candidates whose gains are noisy but the same on both splits (false alarms over 400 seeds)', () => {
    // The incident's honest gain (0.120 bits per byte) with a wide per-item spread, 20 loss items per split (the
    // test task's size): the two means differ by noise alone, and k = 3 σ of that noise holds nearly all of them.
    let alarms = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const r = heldoutOutrunsPublic(evidence(normals(seed, 20, 0.12, 0.25), normals(10_000 + seed, 20, 0.12, 0.25)));
      if (!r.passed) alarms++;
    }
    expect(alarms).toBeLessThanOrEqual(4); // ≈ 0.13% expected under normality (one-sided 3 σ): at most 1% here
  });

  test('rejects a held-out gain that outruns the public one beyond k σ, stating the bound and its figures', () => {
    // The incident: 0.465 bits per byte held-out vs 0.120 public, each with a 0.25 per-item spread.
    const e = evidence(normals(1, 20, 0.465, 0.25), normals(2, 20, 0.12, 0.25));
    const r = heldoutOutrunsPublic(e);
    expect(r.passed).toBe(false);
    expect(r.hold).toBe(false);
    const f = r.figures;
    expect(f).toMatchObject({ k: 3, action: 'reject', 'bits_per_byte.heldoutN': 20, 'bits_per_byte.publicN': 20 });
    // σ = √(s²_h/n_h + s²_p/n_p), recomputed from the same numbers; the bound is k σ.
    const held = e.items.bits_per_byte!.map((i) => i.incumbent - i.candidate);
    const sigma = Math.sqrt(sampleVariance(held) / 20 + e.integrity!.means![0].publicSpread!.variance / 20);
    expect(f['bits_per_byte.sigma']).toBeCloseTo(sigma, 5);
    expect(f['bits_per_byte.bound']).toBeCloseTo(3 * sigma, 5);
    expect(f['bits_per_byte.outrun']).toBeGreaterThan(f['bits_per_byte.bound'] as number);
    expect(r.reason).toMatch(
      /held-out bits_per_byte improves by 0\.\d+, public by 0\.\d+: held-out outruns public by 0\.\d+ \(bound 3σ = 0\.\d+, σ = 0\.\d+ from 20 held-out and 20 public paired deltas\): held-out gains what public does not/,
    );
    expect(r.reason).toMatch(/rejected \(heldoutOutrun: reject\)$/);
    const gate = runGate(e);
    expect(gate).toMatchObject({ promote: false, hold: false, rule: 'heldoutOutrunsPublic' });
    expect(gate.results.find((x) => x.rule === 'heldoutImprovement')?.passed).toBe(true); // held-out alone would promote
  });

  test('the bound grows with the spread: the same outrun is noise when items scatter three times as much', () => {
    const tight = heldoutOutrunsPublic(evidence(normals(3, 20, 0.3, 0.1), normals(4, 20, 0.12, 0.1)));
    // The same draws scaled about their means: same means, three times the spread.
    const widen = (xs: number[]) => xs.map((x) => mean(xs) + 3 * (x - mean(xs)));
    const wide = heldoutOutrunsPublic(evidence(widen(normals(3, 20, 0.3, 0.1)), widen(normals(4, 20, 0.12, 0.1))));
    expect(tight.passed).toBe(false);
    expect(wide.passed).toBe(true);
    expect(wide.figures['bits_per_byte.outrun']).toBeCloseTo(tight.figures['bits_per_byte.outrun'] as number, 6);
    expect(wide.figures['bits_per_byte.bound'] as number).toBeCloseTo(3 * (tight.figures['bits_per_byte.bound'] as number), 4);
    // …and shrinks with more items: the same spread over four times the items halves σ.
    const many = heldoutOutrunsPublic(evidence(normals(3, 80, 0.3, 0.3), normals(4, 80, 0.12, 0.3)));
    const few = heldoutOutrunsPublic(evidence(normals(3, 20, 0.3, 0.3), normals(4, 20, 0.12, 0.3)));
    expect(many.figures['bits_per_byte.sigma'] as number).toBeLessThan(0.65 * (few.figures['bits_per_byte.sigma'] as number));
    // k is the setting: a larger multiple lets the tight outrun through.
    expect(heldoutOutrunsPublic(evidence(normals(3, 20, 0.3, 0.1), normals(4, 20, 0.12, 0.1), { heldoutOutrunSigmas: 100 })).passed).toBe(
      true,
    );
  });

  test("a public gain larger than the held-out one is not this check's business (publicHeldoutGap's)", () => {
    expect(heldoutOutrunsPublic(evidence(normals(5, 20, 0.1, 0.1), normals(6, 20, 0.6, 0.1))).passed).toBe(true);
  });

  test('exact match is oriented higher-is-better; 0/1 items have their own spread', () => {
    const items = (n: number, better: number): PairedItem[] =>
      Array.from({ length: n }, (_, i) => ({ category: 'identifier', candidate: i < better ? 1 : 0, incumbent: 0 }));
    const e = (heldBetter: number, pubBetter: number): GateEvidence => ({
      candidateCheckpointId: 'c',
      incumbentCheckpointId: 'i',
      items: { exact_match: items(60, heldBetter) },
      settings: gateSettingsWithDefaults({ metric: 'exact_match' }),
      integrity: {
        means: [
          {
            metric: 'exact_match',
            candidatePublic: pubBetter / 60,
            incumbentPublic: 0,
            candidateHeldout: heldBetter / 60,
            incumbentHeldout: 0,
            publicSpread: { n: 60, variance: sampleVariance(items(60, pubBetter).map((i) => i.candidate)) },
          },
        ],
      },
    });
    expect(heldoutOutrunsPublic(e(20, 15)).passed).toBe(true);
    expect(heldoutOutrunsPublic(e(50, 10)).passed).toBe(false);
  });

  test('hold: the failure asks for a researcher instead of a rejection, unless another check fails too', () => {
    const e = evidence(normals(1, 20, 0.465, 0.25), normals(2, 20, 0.12, 0.25), { heldoutOutrun: 'hold' });
    const r = heldoutOutrunsPublic(e);
    expect(r).toMatchObject({ passed: false, hold: true, figures: { action: 'hold' } });
    expect(r.reason).toMatch(/held for a researcher's approval \(heldoutOutrun: hold\)$/);
    expect(runGate(e)).toMatchObject({ promote: false, hold: true, rule: 'heldoutOutrunsPublic' });
    expect(runGate(e).reason).toMatch(/^held by heldoutOutrunsPublic: /);
    const alsoCanary = { ...e, integrity: { ...e.integrity, heldoutCanaryHits: ['s@1/heldout-canary-0'] } };
    expect(runGate(alsoCanary)).toMatchObject({ promote: false, hold: false, rule: 'heldoutOutrunsPublic' });
  });

  test('without per-item public deltas (or with fewer than two items a split) it measured nothing and passes', () => {
    const e = evidence(normals(1, 20, 0.465, 0.25), normals(2, 20, 0.12, 0.25));
    delete e.integrity!.means![0].publicSpread;
    expect(heldoutOutrunsPublic(e)).toMatchObject({ passed: true, figures: { measured: 'no' } });
    expect(heldoutOutrunsPublic(evidence([0.9], normals(2, 20, 0.12, 0.25))).figures).toEqual({ measured: 'no' });
  });
});

/**
 * Evidence with both controls (bits per byte): the incumbent scores 3.0 everywhere, the candidate 3.0 − g on each
 * item (g: its gain over the incumbent), and the seed reruns' mean scores the candidate's score + d (d: the
 * candidate's gain over that reference model). Held-out g and d become the paired items; public ones the means.
 */
function referenced(held: { g: number[]; d: number[] }, pub: { g: number[]; d: number[] }, settings: GateSettingsInput = {}): GateEvidence {
  const e = evidence(held.g, pub.g, settings);
  e.items.bits_per_byte = held.g.map((g, i) => ({ category: 'typescript', candidate: 3 - g, incumbent: 3, reference: 3 - g + held.d[i] }));
  e.integrity!.means![0].referencePublic = { n: pub.d.length, variance: sampleVariance(pub.d), gain: mean(pub.d), reruns: 3 };
  return e;
}

describe('heldoutOutrunsPublic against the seed reruns (the reference control)', () => {
  test('sees a leak that the wide gains over a weak incumbent hide', () => {
    // Over the incumbent, every item gains a lot and unevenly (sd 0.6): an outrun of 0.2 is about 1σ there. Over a
    // reference trained on the same data, the honest gains are small and even (sd 0.1): the same 0.2 is 6σ.
    const e = referenced(
      { g: normals(11, 60, 0.5, 0.6), d: normals(12, 60, 0.2, 0.1) },
      { g: normals(13, 60, 0.3, 0.6), d: normals(14, 60, 0, 0.1) },
    );
    const r = heldoutOutrunsPublic(e);
    const f = r.figures as Record<string, number>;
    expect(f['bits_per_byte.outrun']).toBeLessThan(f['bits_per_byte.bound']); // the incumbent control alone passes it
    expect(f['bits_per_byte.reference.outrun']).toBeGreaterThan(f['bits_per_byte.reference.bound']);
    expect(f['bits_per_byte.reference.heldoutN']).toBe(60);
    expect(r.passed).toBe(false);
    expect(r.reason).toMatch(
      /held-out bits_per_byte improves over the mean of 3 seed rerun\(s\) by 0\.\d+, public by -?0\.\d+: held-out outruns public by 0\.\d+ \(bound 3σ/,
    );
    expect(runGate(e)).toMatchObject({ promote: false, rule: 'heldoutOutrunsPublic' });
    // Without the reruns' public scores the reference control is not measured, and the leak goes through.
    delete e.integrity!.means![0].referencePublic;
    expect(heldoutOutrunsPublic(e).passed).toBe(true);
    expect(heldoutOutrunsPublic(e).figures['bits_per_byte.reference.outrun']).toBeUndefined();
  });

  test('passes honest candidates against both controls (false alarms over 400 seeds)', () => {
    let alarms = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const e = referenced(
        { g: normals(seed, 60, 0.3, 0.6), d: normals(1000 + seed, 60, 0.05, 0.1) },
        { g: normals(2000 + seed, 60, 0.3, 0.6), d: normals(3000 + seed, 60, 0.05, 0.1) },
      );
      if (!heldoutOutrunsPublic(e).passed) alarms++;
    }
    expect(alarms).toBeLessThanOrEqual(6); // two one-sided 3σ tests: ≈ 0.27% expected, at most 1.5% here
  });

  test('a held-out item the reruns did not all score is left out of the reference control, not guessed', () => {
    const e = referenced(
      { g: normals(21, 20, 0.3, 0.2), d: normals(22, 20, 0, 0.1) },
      { g: normals(23, 20, 0.3, 0.2), d: normals(24, 20, 0, 0.1) },
    );
    delete e.items.bits_per_byte![0].reference;
    const f = heldoutOutrunsPublic(e).figures;
    expect(f['bits_per_byte.reference.heldoutN']).toBe(19);
    expect(f['bits_per_byte.heldoutN']).toBe(20);
  });
});

describe('held-out canaries', () => {
  const a = buildHeldoutCanaries(7, 'digest-a');

  test('random-looking, deterministic, and derived from the held-out text: the seed and the code do not give them away', () => {
    expect(a.canaries).toHaveLength(2);
    for (const c of a.canaries) expect(c).toMatch(/^[0-9a-f]{40}$/);
    expect(new Set(a.canaries).size).toBe(2);
    expect(buildHeldoutCanaries(7, 'digest-a')).toEqual(a);
    const b = buildHeldoutCanaries(7, 'digest-b');
    expect(b.canaries.some((c) => a.canaries.includes(c))).toBe(false);
  });

  test('each is carried by one held-out item whose prompt shows only its beginning; the probes never hold one', () => {
    a.items.forEach((item, k) => {
      const c = a.canaries[k];
      expect(item).toMatchObject({
        id: `heldout-canary-${k}`,
        category: 'canary',
        grader: 'exact_match',
        reference: c.slice(HELDOUT_CANARY_SHOWN),
      });
      expect(item.prompt.includes(c)).toBe(false);
      expect(item.prompt + item.reference).toContain(c);
    });
    const probes = buildBuiltinProbes([], 7);
    const text = JSON.stringify(probes);
    for (const c of a.canaries) expect(text.includes(c) || text.includes(c.slice(HELDOUT_CANARY_SHOWN))).toBe(false);
  });

  test('heldoutCanaryInOutputs rejects any output completing one, naming the items, and never holds', () => {
    const e = evidence(normals(1, 20, 0.3, 0.1), normals(2, 20, 0.3, 0.1), { heldoutOutrun: 'hold' });
    expect(heldoutCanaryInOutputs({ ...e, integrity: { heldoutCanaryHits: [] } })).toMatchObject({ passed: true, figures: { hits: 0 } });
    expect(heldoutCanaryInOutputs({ ...e, integrity: {} })).toMatchObject({ passed: true, figures: { measured: 'no' } });
    const hit = { ...e, integrity: { ...e.integrity, heldoutCanaryHits: ['s@1/heldout-canary-0', 's@1/heldout-canary-1'] } };
    const r = heldoutCanaryInOutputs(hit);
    expect(r).toMatchObject({ passed: false, figures: { hits: 2, items: 's@1/heldout-canary-0, s@1/heldout-canary-1' } });
    expect(r.hold).toBeUndefined();
    expect(r.reason).toMatch(/the model saw held-out text/);
    expect(runGate(hit)).toMatchObject({ promote: false, hold: false, rule: 'heldoutCanaryInOutputs' });
  });
});
