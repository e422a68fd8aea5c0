// Thresholdout for the gate (core/gate/reusable-holdout.ts) and the ledger's pure half (core/gate/heldout-budget.ts):
// a question the public split answers as held-out would is answered from public and costs nothing; one where they
// disagree is answered from held-out, noised, for one unit; a spent budget answers nothing; the same seeds give the
// same answer; and the gate holds its test to the granted level.
import { runGate } from '../../core/gate/checks';
import type { GateEvidence, PairedItem } from '../../core/gate/evidence';
import { budgetSpentOutcome, grantOf, holdoutQueryOf, ledgerLine, ledgerFiguresOf, discoveryOf } from '../../core/gate/heldout-budget';
import { seededUniform } from '../../core/gate/paired-test';
import { laplace, seedOf, thresholdout, type HeldoutBudgetSettings } from '../../core/gate/reusable-holdout';
import { gateSettingsWithDefaults } from '../../core/gate/settings';

const S: HeldoutBudgetSettings = { enabled: true, queries: 20, threshold: 3, noiseScale: 0.25 };
const seeds = (decision: string, spentBefore = 0) => ({ spentBefore, suiteSeed: 'suite@1', decisionSeed: decision });

test('splits that agree are answered from public and spend nothing', () => {
  for (let k = 0; k < 50; k++) {
    const a = thresholdout({ heldout: 0.031, public: 0.03, scale: 0.01 }, S, seeds(`outer/${k}/gate`));
    expect(a).toMatchObject({ answer: 0.03, answeredFrom: 'public', spent: 0, spentBefore: 0, of: 20 });
  }
});

test('splits that disagree past the threshold are answered from held-out, noised, for one unit', () => {
  const answers = Array.from({ length: 50 }, (_, k) =>
    thresholdout({ heldout: 0.0, public: 0.2, scale: 0.01 }, S, seeds(`outer/${k}/gate`, 3)),
  );
  for (const a of answers) {
    expect(a).toMatchObject({ answeredFrom: 'heldout', spent: 1, spentBefore: 3 });
    // ξ ~ Lap(σ), σ = 0.25 × 0.01: the answer is held-out's, within a few σ, and not held-out's exactly.
    expect(Math.abs(a.answer!)).toBeLessThan(0.02);
  }
  expect(new Set(answers.map((a) => a.answer)).size).toBe(50);
  // No public answer to check: the held-out one is given and paid for.
  expect(thresholdout({ heldout: 0.05, scale: 0.01 }, S, seeds('x'))).toMatchObject({ answeredFrom: 'heldout', spent: 1 });
});

test('the answer is deterministic per seed: the same decision recomputes to the same figures, another draws other noise', () => {
  const q = { heldout: 0.1, public: 0.16, scale: 0.01 };
  const once = thresholdout(q, S, seeds('outer/7/gate', 2));
  expect(thresholdout(q, S, seeds('outer/7/gate', 2))).toEqual(once);
  expect(thresholdout(q, S, seeds('outer/8/gate', 2)).noisedThreshold).not.toBe(once.noisedThreshold);
  // T̂'s draw is the suite version's, redrawn when a unit is spent: at another count of units it differs.
  const a = thresholdout(q, S, seeds('outer/7/gate', 3));
  expect(a.noisedThreshold).not.toBe(once.noisedThreshold);
  expect(seedOf('suite@1#2')).toBe(seedOf('suite@1#2'));
});

test('near the threshold the noise decides: a disagreement of T standard errors is answered from held-out about half the time', () => {
  // |h − p| = T·scale exactly: Thresholdout's comparison with T + γ + η, both symmetric, goes either way.
  let fromHeldout = 0;
  for (let k = 0; k < 400; k++) {
    const a = thresholdout({ heldout: 0, public: 0.03, scale: 0.01 }, S, { spentBefore: k % 5, suiteSeed: `s${k}`, decisionSeed: `d${k}` });
    if (a.answeredFrom === 'heldout') fromHeldout++;
  }
  expect(fromHeldout).toBeGreaterThan(120);
  expect(fromHeldout).toBeLessThan(280);
});

test('a spent budget answers nothing (⊥), however well the splits agree', () => {
  expect(thresholdout({ heldout: 0.03, public: 0.03, scale: 0.01 }, S, seeds('y', 20))).toEqual({
    answeredFrom: 'none',
    spent: 0,
    spentBefore: 20,
    of: 20,
  });
});

test('Laplace draws have mean 0 and mean absolute value b', () => {
  const rand = seededUniform(5);
  const xs = Array.from({ length: 40_000 }, () => laplace(rand, 2));
  expect(xs.reduce((s, x) => s + x, 0) / xs.length).toBeCloseTo(0, 1);
  expect(xs.reduce((s, x) => s + Math.abs(x), 0) / xs.length).toBeCloseTo(2, 1);
});

/** 60 held-out loss items, the candidate better by `gain`, and public means with the public gain `publicGain`. */
function evidence(gain: number, publicGain: number | undefined, settings = {}): GateEvidence {
  const items: PairedItem[] = Array.from({ length: 60 }, (_, i) => {
    const inc = 2.5 + 0.3 * Math.sin(i * 1.7);
    return { category: `c${i % 3}`, incumbent: inc, candidate: inc - gain + 0.05 * Math.cos(i * 2.3) };
  });
  return {
    candidateCheckpointId: 'cand',
    incumbentCheckpointId: 'inc',
    items: { bits_per_byte: items },
    settings: gateSettingsWithDefaults({ margin: 0.02, ...settings }),
    ...(publicGain === undefined
      ? {}
      : {
          integrity: {
            means: [
              {
                metric: 'bits_per_byte',
                candidatePublic: 2.5 - publicGain,
                incumbentPublic: 2.5,
                candidateHeldout: 0,
                incumbentHeldout: 0,
                publicSpread: { n: 60, variance: 0.05 ** 2 / 2 },
              },
            ],
          },
        }),
  };
}

test("the gate's question is the oriented mean gain on each split, with the difference's standard error", () => {
  const q = holdoutQueryOf(evidence(0.1, 0.12));
  expect(q.heldout).toBeCloseTo(0.1, 2);
  expect(q.public).toBeCloseTo(0.12, 12);
  expect(q.scale).toBeGreaterThan(0);
  expect(holdoutQueryOf(evidence(0.1, undefined)).public).toBeUndefined();
});

test('the gate holds its test to the granted level and its margin to the claimed gain, and records both', () => {
  const ids = { suiteId: 'suite@1', decisionId: 'outer/1/gate' };
  const e = evidence(0.1, 0.1);
  e.heldoutBudget = grantOf(e, { spent: 0, history: [] }, ids);
  expect(e.heldoutBudget.answer).toMatchObject({ answeredFrom: 'public', spent: 0 });
  expect(e.heldoutBudget.alpha?.level).toBeCloseTo(0.05 * 0.5 * 0.3829, 3);
  const outcome = runGate(e);
  const check = outcome.results.find((r) => r.rule === 'heldoutImprovement')!;
  expect(check).toMatchObject({ passed: true });
  expect(check.figures).toMatchObject({
    level: e.heldoutBudget.alpha!.level,
    significant: 'yes',
    answeredFrom: 'public',
    claimedDelta: 0.1,
  });
  expect(check.reason).toMatch(/claimed 0\.1000 \(answered from public\).*α_1 0\.00957 of campaign alpha 0\.05/);
  expect(discoveryOf(outcome)).toBe(true);
  const figures = ledgerFiguresOf('suite@1', { spent: 0, history: [] }, e.settings, e.heldoutBudget, true);
  expect(figures.budget).toEqual({ suiteId: 'suite@1', spent: 0, remaining: 20, of: 20, answeredFrom: 'public', answer: 0.1 });
  expect(figures.alpha).toMatchObject({ index: 1, discovery: true, wealthBefore: 0.025 });
  expect(figures.alpha!.wealthAfter).toBeCloseTo(0.025 - figures.alpha!.level + 0.025, 12);
  expect(ledgerLine(figures)).toMatch(
    /^held-out budget: spent 0 \(answered from public\), 20 of 20 left; α_1 0\.00957 of 0\.05 \(wealth 0\.0250 → 0\.0404, a discovery\)$/,
  );

  // A public gain that held-out does not bear out is answered from held-out, and the claim is held-out's.
  const inflated = evidence(0.1, 0.4);
  inflated.heldoutBudget = grantOf(inflated, { spent: 4, history: [true] }, ids);
  expect(inflated.heldoutBudget.answer).toMatchObject({ answeredFrom: 'heldout', spent: 1 });
  expect(inflated.heldoutBudget.answer!.answer).toBeCloseTo(0.1, 1);
  expect(ledgerFiguresOf('suite@1', { spent: 4, history: [true] }, inflated.settings, inflated.heldoutBudget, false).budget).toMatchObject({
    spent: 1,
    remaining: 15,
  });

  // A level far below the default resamples' resolution (1/2001) is still reachable: the p-value is refined.
  const late = evidence(0.1, 0.1);
  late.heldoutBudget = grantOf(late, { spent: 0, history: Array.from({ length: 30 }, () => false) }, ids);
  const level = late.heldoutBudget.alpha!.level;
  expect(level).toBeLessThan(1 / 2001);
  const lateCheck = runGate(late).results.find((r) => r.rule === 'heldoutImprovement')!;
  expect(lateCheck).toMatchObject({ passed: true });
  expect(lateCheck.figures.resamples).toBeGreaterThan(20 / level - 1);
});

test('a spent budget refuses the gate, names the rule and asks for fresh held-out items; disabled, nothing is refused', () => {
  const s = gateSettingsWithDefaults({ heldoutBudget: { queries: 5 } });
  const refused = budgetSpentOutcome('suite@1', { spent: 5, history: [] }, s);
  expect(refused).toMatchObject({ promote: false, hold: false, rule: 'heldoutBudgetSpent', results: [] });
  expect(refused!.reason).toMatch(/all 5 answers.*register a new suite version with fresh held-out items \(`flywheel suite add`\)/);
  expect(budgetSpentOutcome('suite@1', { spent: 4, history: [] }, s)).toBeUndefined();
  expect(
    budgetSpentOutcome('suite@1', { spent: 50, history: [] }, gateSettingsWithDefaults({ heldoutBudget: { enabled: false } })),
  ).toBeUndefined();
});
