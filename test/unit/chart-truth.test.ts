// The dashboard's charts say what the data says: a curve's unit is the one its trainer logs (never a fixed "bits per
// byte"), axes span the data, end labels keep apart, integer knobs get integer ticks, importance says how many
// trials it used (with a caveat under ten), and the predictions' diff marks what the output changed.
import { axisRange, labelOffsets } from '../../server/dashboard/chart-layout';
import { curvesOption, heldoutOption, importanceOption, sliceOption } from '../../server/dashboard/charts';
import { paramImportance } from '../../server/dashboard/param-importance';
import { metricLabel } from '../../core/metric-units';
import { inlineDiff, textDiff } from '../../core/text-diff';
import type { SearchSpace } from '../../core/spec';

test('a curve is labelled in the unit its trainer logs, and in none for a trainer of one’s own', () => {
  expect(metricLabel(undefined, 'loss')).toBe('loss (bits per byte)');
  expect(metricLabel('builtin', 'loss')).toBe('loss (bits per byte)');
  expect(metricLabel('hf', 'loss')).toBe('loss (nats per token)');
  expect(metricLabel('hf', 'loss', { objective: 'dpo' })).toBe('loss (DPO loss)');
  expect(metricLabel(['python3', '/opt/fw/trainers/torch/main.py'], 'loss')).toBe('loss (bits per byte)');
  expect(metricLabel(['python3', 'my_trainer.py'], 'loss')).toBe('loss');
  const y = (o: Record<string, unknown>) => o.yAxis as { name: string; min: number; max: number };
  expect(y(curvesOption([{ name: 'e1', points: [[1, 2.5]] }], metricLabel('hf', 'loss'), 'step', false)).name).toBe(
    'loss (nats per token)',
  );
});

test('axes span the data: a public pass rate of 0.9–0.95 is not drawn from 0.5', () => {
  const o = heldoutOption(
    [
      { iteration: 0, production: 3.9 },
      { iteration: 1, production: 3.6, candidate: 3.6, publicBest: 0.9 },
      { iteration: 2, production: 3.6, candidate: 3.65, publicBest: 0.95 },
    ],
    'bits_per_byte',
    'pass_rate',
  );
  const [left, right] = o.yAxis as { min: number; max: number }[];
  expect(right.min).toBeGreaterThanOrEqual(0.85);
  expect(right.max).toBeLessThanOrEqual(1);
  expect(left.min).toBeLessThanOrEqual(3.6);
  expect(left.max).toBeGreaterThanOrEqual(3.9);
  expect(left.max).toBeLessThan(4.5);
  expect(axisRange([])).toBeUndefined();
  // A log axis ends on short figures (no 11.9659090909 at its top).
  expect(axisRange([1.7, 9.57], true)).toEqual({ min: 1.3, max: 12 });
  expect(axisRange([0.2, 0.4])!.min).toBeGreaterThanOrEqual(0);
});

test('end labels that would overlap are moved at least the gap apart, in order; distant ones stay put', () => {
  const offsets = labelOffsets([3.0, 3.001, 3.002, 5], { min: 2, max: 6 }, 240);
  const at = [3.0, 3.001, 3.002, 5].map((v, i) => 240 * (1 - (v - 2) / 4) + offsets[i]);
  const sorted = [...at].sort((a, b) => a - b);
  for (let k = 1; k < sorted.length; k++) expect(sorted[k] - sorted[k - 1]).toBeGreaterThanOrEqual(16);
  expect(offsets[3]).toBe(0);
  // The held-out chart's production and candidate ending on one value get different offsets.
  const o = heldoutOption([{ iteration: 1, production: 3.3, candidate: 3.3 }], 'bits_per_byte', 'bits_per_byte');
  const [p, c] = (o.series as { endLabel: { offset: [number, number] } }[]).map((s) => s.endLabel.offset[1]);
  expect(Math.abs(p - c)).toBeGreaterThanOrEqual(16);
});

test('an integer knob has integer ticks; importance says how many trials it used, with a caveat under ten', () => {
  const space: SearchSpace = {
    context: { type: 'int', low: 1, high: 8, log: false },
    lr: { type: 'float', low: 1e-4, high: 0.1, log: true },
  };
  expect((sliceOption(space, 'context', [], 'pass_rate').xAxis as { minInterval?: number }).minInterval).toBe(1);
  expect((sliceOption(space, 'lr', [], 'pass_rate').xAxis as { minInterval?: number }).minInterval).toBeUndefined();
  const trials = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ params: { context: 1 + (i % 8), lr: 1e-4 * 2 ** i }, score: i % 3 }));
  const title = (n: number) => (importanceOption(paramImportance(space, trials(n))).title as { text: string }).text;
  expect(title(3)).toBe('needs at least 4 scored trials');
  expect(title(4)).toMatch(/^from 4 scored trials: too few to trust \(under 10\)/);
  expect(title(12)).toBe('from 12 scored trials');
});

test('the diff marks what the output removed and added, word by word', () => {
  expect(inlineDiff('Hello, Ada!', 'Hello, Bob!')).toBe('Hello, [-Ada-]{+Bob+}!');
  expect(inlineDiff('return a + b', 'return a + b')).toBe('return a + b');
  expect(textDiff('', 'x')).toEqual([{ op: '+', text: 'x' }]);
  expect(textDiff('a '.repeat(600), 'b '.repeat(600))).toBeUndefined();
});
