// The hacking guard's checks, pure: each rejects its shortcut with the rule, the figures and the items named, and
// passes an honest candidate; a check with no evidence passes and says it measured nothing.
import { runGate } from '../../core/gate/checks';
import type { GateEvidence } from '../../core/gate/evidence';
import { canaryInOutputs, cheatOnlyPass, publicHeldoutGap, twinGap } from '../../core/gate/integrity-checks';
import type { TwinPair } from '../../core/gate/evidence';
import type { IntegrityEvidence } from '../../core/gate/evidence';
import { gateSettingsWithDefaults } from '../../core/gate/settings';

const evidence = (integrity: IntegrityEvidence): GateEvidence => ({
  candidateCheckpointId: 'cand',
  incumbentCheckpointId: 'inc',
  // 30 held-out items, each better by 1 (exact match): the held-out checks pass, so only the guard decides.
  items: { exact_match: Array.from({ length: 30 }, () => ({ category: 'identifier', candidate: 1, incumbent: 0 })) },
  settings: gateSettingsWithDefaults({ metric: 'exact_match' }),
  integrity,
});

const twins = (n: number, cand: [number, number], inc: [number, number]): TwinPair[] =>
  Array.from({ length: n }, (_, i) => ({
    id: `twin-${i}`,
    of: `pub-${i}`,
    kind: 'perturbed',
    candidateOriginal: i < cand[0] ? 1 : 0,
    candidateTwin: i < cand[1] ? 1 : 0,
    incumbentOriginal: i < inc[0] ? 1 : 0,
    incumbentTwin: i < inc[1] ? 1 : 0,
  }));

describe('publicHeldoutGap', () => {
  test('rejects a public score that rises while held-out does not', () => {
    const r = publicHeldoutGap(
      evidence({
        means: [{ metric: 'exact_match', candidatePublic: 0.95, incumbentPublic: 0.3, candidateHeldout: 0.31, incumbentHeldout: 0.3 }],
      }),
    );
    expect(r).toMatchObject({ passed: false, figures: { 'exact_match.gapGrowth': 0.64, 'exact_match.bound': 0.2 } });
    expect(r.reason).toMatch(/public rises without held-out/);
  });
  test('passes when both rise together; lower-is-better metrics are oriented', () => {
    expect(
      publicHeldoutGap(
        evidence({
          means: [{ metric: 'exact_match', candidatePublic: 0.5, incumbentPublic: 0.3, candidateHeldout: 0.45, incumbentHeldout: 0.3 }],
        }),
      ).passed,
    ).toBe(true);
    expect(
      publicHeldoutGap(
        evidence({
          means: [{ metric: 'bits_per_byte', candidatePublic: 1.0, incumbentPublic: 3.0, candidateHeldout: 2.9, incumbentHeldout: 3.0 }],
        }),
      ).passed,
    ).toBe(false);
    expect(
      publicHeldoutGap(
        evidence({
          means: [{ metric: 'bits_per_byte', candidatePublic: 2.5, incumbentPublic: 3.0, candidateHeldout: 2.6, incumbentHeldout: 3.0 }],
        }),
      ).passed,
    ).toBe(true);
  });
});

describe('twinGap', () => {
  test('rejects a candidate that passes originals but not their twins, naming the twins', () => {
    const r = twinGap(evidence({ twins: twins(20, [18, 4], [6, 5]) }));
    expect(r.passed).toBe(false);
    expect(r.figures).toMatchObject({ twins: 20, candidateGap: 0.7, incumbentGap: 0.05, gapGrowth: 0.65 });
    expect(r.reason).toContain('twin-4, twin-5');
  });
  test('passes when twins keep up with their originals', () => {
    expect(twinGap(evidence({ twins: twins(20, [10, 8], [6, 5]) })).passed).toBe(true);
  });
});

test('cheatOnlyPass rejects any passed cheat-only item and names it', () => {
  expect(cheatOnlyPass(evidence({ cheatOnly: { scored: 2, passed: [] } })).passed).toBe(true);
  const r = cheatOnlyPass(evidence({ cheatOnly: { scored: 2, passed: ['s@1/cheat-only-add'] } }));
  expect(r).toMatchObject({ passed: false, figures: { passedItems: 1, items: 's@1/cheat-only-add' } });
});

test('canaryInOutputs rejects any output carrying a canary', () => {
  expect(canaryInOutputs(evidence({ canaryHits: [] })).passed).toBe(true);
  expect(canaryInOutputs(evidence({ canaryHits: ['s@1/canary-0'] }))).toMatchObject({ passed: false, figures: { hits: 1 } });
});

test('runGate: the guard decides with everything else passing; no evidence means nothing measured', () => {
  const honest = runGate(
    evidence({
      means: [{ metric: 'exact_match', candidatePublic: 0.5, incumbentPublic: 0.3, candidateHeldout: 0.45, incumbentHeldout: 0.3 }],
      twins: twins(20, [10, 8], [6, 5]),
      cheatOnly: { scored: 2, passed: [] },
      canaryHits: [],
    }),
  );
  expect(honest.promote).toBe(true);
  const cheat = runGate(evidence({ cheatOnly: { scored: 2, passed: ['x'] } }));
  expect(cheat).toMatchObject({ promote: false, rule: 'cheatOnlyPass' });
  const bare = runGate(evidence({}));
  expect(bare.promote).toBe(true);
  expect(bare.results.find((r) => r.rule === 'twinGap')?.reason).toMatch(/not measured/);
});
