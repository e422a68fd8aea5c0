// The outer loop as the CLI prints it, and the durations `schedule create --every` accepts: pure functions.
import { formatDuration, parseDuration } from '../../cli/duration';
import { formatEvidence, formatIterations, phaseLine } from '../../cli/outer-view';
import type { PromotionEvidence } from '../../contracts/outer-loop';
import { decisionLines, decisionText } from '../../core/gate/decision-lines';
import { formatIteration } from '../../cli/outer-demo';

test('durations: one whole number and one unit, nothing else', () => {
  expect([parseDuration('2s'), parseDuration('45s'), parseDuration('30m'), parseDuration('6h'), parseDuration('1d')]).toEqual([
    2_000, 45_000, 1_800_000, 21_600_000, 86_400_000,
  ]);
  for (const bad of ['', '1', 'd', '0s', '01h', '1.5h', '-1d', '1h30m', '1 d', '1D', '366d', '1w'])
    expect(() => parseDuration(bad, '--every')).toThrow(`bad --every "${bad}"`);
  expect([86_400_000, 5_400_000, 2_000, 1_500].map(formatDuration)).toEqual(['1d', '90m', '2s', '1500ms']);
});

test('a pending promotion shows the gate, the deltas, the cost, the config diff, the deadline and the command', () => {
  const e: PromotionEvidence = {
    outerIterationId: 'demo/outer/i3',
    candidateCheckpointId: 'ck-new',
    incumbentCheckpointId: 'ck-old',
    gate: {
      promote: true,
      rule: 'all',
      reason: 'held-out improved by 0.031',
      checks: [
        { rule: 'margin', passed: true, reason: '+0.031 >= 0.01' },
        { rule: 'probes', passed: false, reason: '2 canaries answered' },
      ],
    },
    categoryDeltas: [
      { metric: 'exact_match', category: 'ts', delta: 0.05, items: 40 },
      { metric: 'exact_match', category: 'py', delta: -0.0123, items: 12 },
    ],
    cost: { trainerSeconds: 612.4, experiments: 8 },
    configDiff: [
      ['lr', 0.001, 0.003],
      ['optimizer', 'sgd', 'adam'],
    ],
    deadline: '2026-12-03T12:00:00.000Z',
    defaultDecision: 'reject',
  };
  const text = formatEvidence(e, 'demo');
  expect(text).toContain('promotion awaiting approval (demo/outer/i3): candidate ck-new vs production ck-old');
  expect(text).toContain('gate: PROMOTE (all): held-out improved by 0.031');
  expect(text).toContain('FAIL  probes: 2 canaries answered');
  expect(text).toMatch(/exact_match \/ ts\s+\+0\.0500 {2}\(40 items\)/);
  expect(text).toMatch(/exact_match \/ py\s+-0\.0123 {2}\(12 items\)/);
  expect(text).toContain('cost: 612 trainer-seconds over 8 experiments');
  expect(text).toContain('config diff (production → candidate): lr 0.001 → 0.003, optimizer sgd → adam');
  expect(text).toContain('deadline: 2026-12-03T12:00:00.000Z, then it is rejected by default');
  expect(text).toContain('answer with: flywheel promote demo --approve | --reject [--note TEXT]');
});

test('phase lines and the iteration table', () => {
  expect(phaseLine({ phase: 'inner-loop', iteration: 3, innerLoopId: 'demo/outer/i3/inner', done: [] })).toBe(
    'iteration 3  inner-loop  (inner loop demo/outer/i3/inner)',
  );
  expect(phaseLine({ phase: 'claiming', done: [] })).toBe('iteration -  claiming');
  const table = formatIterations([
    {
      outerIterationId: 'demo/outer/i1',
      iteration: 1,
      status: 'promoted',
      reason: 'margin met',
      newFeedback: 120,
      critiques: 14,
      datasetVersionId: 'dv-1',
      datasetExamples: 900,
      heldout: { metric: 'exact_match', candidate: 0.41, incumbent: 0.38 },
    },
    { outerIterationId: 'demo/outer/i2', iteration: 2, status: 'skipped', reason: 'no new feedback', newFeedback: 0, critiques: 0 },
  ]).split('\n');
  expect(table).toHaveLength(3);
  expect(table[1]).toMatch(/^1 +promoted +120 +14 +dv-1 \(900\) +exact_match 0\.4100\/0\.3800 +margin met$/);
  expect(table[2]).toMatch(/^2 +skipped +0 +0 +- +- +no new feedback$/);
  expect(formatIterations([])).toBe('no iteration finished');
});

// A promotion's reason joins every check's `rule: reason` with "; " (core/gate/checks.ts): ~1,500 characters on one line.
const PROMOTED =
  'promoted ck-b over ck-a: heldoutImprovement: held-out pass_rate improves by 0.1000 (margin 0), paired-permutation p = 0.0010 (alpha 0.05) over 40 items: passes; ' +
  'heldoutAboveNoise: gain 0.1 against 2.0 × noise 0.02: above noise; noCategoryRegression: no category regressed (worst: ts -0.01; 3 categories); canaryInOutputs: no output carries a canary';

test('a gate decision prints as a short verdict, then its checks one a line', () => {
  expect(decisionLines(PROMOTED)).toEqual({
    verdict: 'promoted ck-b over ck-a (4 checks passed)',
    checks: [
      'heldoutImprovement: held-out pass_rate improves by 0.1000 (margin 0), paired-permutation p = 0.0010 (alpha 0.05) over 40 items: passes',
      'heldoutAboveNoise: gain 0.1 against 2.0 × noise 0.02: above noise',
      // A check's own "; " (a clause, not the next rule) stays on its line.
      'noCategoryRegression: no category regressed (worst: ts -0.01; 3 categories)',
      'canaryInOutputs: no output carries a canary',
    ],
  });
  expect(decisionLines('rejected by noCategoryRegression: ts fell 0.2; py fell 0.1')).toEqual({
    verdict: 'rejected by noCategoryRegression',
    checks: ['ts fell 0.2', 'py fell 0.1'],
  });
  expect(decisionLines('no new feedback')).toEqual({ verdict: 'no new feedback', checks: [] });
  expect(decisionText(PROMOTED, '  ')).toHaveLength(5);
  expect(decisionText(PROMOTED, '  ')[0]).toBe('  gate: promoted ck-b over ck-a (4 checks passed)');

  // The iteration table carries the verdict; the last decision's checks follow it, one a line.
  const lines = formatIterations([
    { outerIterationId: 'demo/outer/i1', iteration: 1, status: 'promoted', reason: PROMOTED, newFeedback: 3, critiques: 1 },
  ]).split('\n');
  expect(lines[1]).toMatch(/ promoted ck-b over ck-a \(4 checks passed\)$/);
  expect(lines.slice(2)).toEqual(["iteration 1's checks:", ...decisionLines(PROMOTED).checks.map((c) => `  ${c}`)]);
  expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(160);
  // The demo's iteration block: the gate's verdict, its checks under it.
  const block = formatIteration(
    1,
    { outerIterationId: 'demo/outer/i1', iteration: 1, status: 'promoted', reason: PROMOTED, newFeedback: 3, critiques: 1 },
    'pass_rate',
  );
  expect(block).toContain('\n  gate: promoted ck-b over ck-a (4 checks passed)\n    heldoutImprovement: ');
});
