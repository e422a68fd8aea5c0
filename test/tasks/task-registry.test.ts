// The Task interface and its registry (core/task.ts, tasks/index.ts): every shipped task is found by name, a spec
// finds its task by kind (a custom task, arithmetic's included, the generic one), a task's default selection is what
// the spec parser fills in for its kind, and the end-of-loop summary prints held-out before/after for whatever metric
// the campaign selects on, in its direction (a custom task's run printed the heading and nothing under it).
import { formatResult, heldoutImproved } from '../../cli/print-result';
import type { InnerLoopResult } from '../../contracts/inner-loop';
import { parseSpec as parseSpecOf } from '../../tasks/task-spec';
import { TASK_NAMES, taskByName, taskForSpec } from '../../tasks/index';
import { summaryMetricsOfSpec, hiddenTaskSources, outerSettingsOfSpec } from '../../services/task-registry';
import { EXAMPLE_TASK_NAMES, taskTeacherProblem } from '../../services/example-tasks';

const custom = { kind: 'custom', dataset: 'words', suite: 'words' } as const;
const parseSpec = (raw: Record<string, unknown>) => parseSpecOf({ searchSpace: { lr: { type: 'float', low: 0.01, high: 0.1 } }, ...raw });

test('the registry names every shipped task; a spec finds its task by kind', () => {
  expect(TASK_NAMES).toEqual(['builtin-code', 'arithmetic', 'custom']);
  expect(EXAMPLE_TASK_NAMES).toEqual(['builtin-code', 'arithmetic']);
  expect(taskForSpec(parseSpec({ name: 'b' }).task).name).toBe('builtin-code');
  expect(taskForSpec(parseSpec({ name: 'c', task: custom }).task).name).toBe('custom');
  expect(taskByName('chess')).toBeUndefined();
  expect(taskTeacherProblem('arithmetic')).toBeUndefined();
  expect(taskTeacherProblem('builtin-code')).toMatch(/has no built-in teacher \(tasks with one: arithmetic\)/);
});

test("each task's default selection is the one the spec parser fills in for its kind", () => {
  for (const name of TASK_NAMES) {
    const task = taskByName(name)!;
    const raw = task.kind === 'custom' ? { name: 'x', task: custom } : { name: 'x', task: { kind: task.kind } };
    expect({ name, ...parseSpec(raw).selection }).toEqual({ name, ...task.selection });
  }
});

test("the gate's clusterBy defaults to the task's itemClusters; a spec's own wins", () => {
  expect(outerSettingsOfSpec(parseSpec({ name: 'b' })).gate.clusterBy).toBe('source');
  expect(outerSettingsOfSpec(parseSpec({ name: 'c', task: custom })).gate.clusterBy).toBe('auto');
  expect(taskByName('arithmetic')!.itemClusters).toBe('item');
  const own = parseSpec({ name: 'b', outerLoop: { promotion: { clusterBy: 'item' } } });
  expect(own.outerLoop.promotion.clusterBy).toBe('item');
  expect(outerSettingsOfSpec(own).gate.clusterBy).toBe('item');
  // The spec itself leaves it unset: the task fills it where the outer loop claims an iteration.
  expect(parseSpec({ name: 'b' }).outerLoop.promotion.clusterBy).toBeUndefined();
});

test('only the built-in code task hides eval sources from trainers', () => {
  expect(hiddenTaskSources(parseSpec({ name: 'b' }).task, '/repo').length).toBeGreaterThan(0);
  expect(hiddenTaskSources(parseSpec({ name: 'c', task: custom }).task, '/repo')).toEqual([]);
});

const result = (heldout: InnerLoopResult['heldout']): InnerLoopResult => ({
  innerLoopId: 'c/inner/1',
  experiments: 2,
  stoppedBy: 'budget',
  best: { experimentId: 'c/inner/1/e1', checkpointId: 'ck', params: { lr: 0.01 }, publicScore: 0.5 },
  heldout,
});

test("a custom task's summary prints its selection metric, held-out before and after", () => {
  const spec = parseSpec({ name: 'c', task: custom });
  const r = result({ baseline: { pass_rate: 0.25, accuracy: 0.25 }, best: { pass_rate: 0.625, accuracy: 0.625 } });
  const text = formatResult(r, summaryMetricsOfSpec(spec));
  expect(text).toContain('held-out (untrained → winner):\n  pass_rate      0.2500 → 0.6250  (better)');
  expect(heldoutImproved(r, summaryMetricsOfSpec(spec)[0])).toBe(true);
});

test('the summary follows the selection metric and its direction', () => {
  const spec = parseSpec({ name: 'c', task: custom, selection: { metric: 'category.carry' } });
  const worse = result({ baseline: { 'category.carry': 0.5 }, best: { 'category.carry': 0.25 } });
  expect(formatResult(worse, summaryMetricsOfSpec(spec))).toContain('  category.carry 0.5000 → 0.2500  (not better)');
  const lower = parseSpec({ name: 'c', task: custom, selection: { metric: 'pass_rate', mode: 'min' } });
  expect(formatResult(worse, summaryMetricsOfSpec(lower))).not.toContain('pass_rate');
  const fewer = result({ baseline: { pass_rate: 0.5 }, best: { pass_rate: 0.25 } });
  expect(formatResult(fewer, summaryMetricsOfSpec(lower))).toContain('  pass_rate      0.5000 → 0.2500  (better)');
});

test("the built-in task's summary is as before: bits per byte, then exact next token", () => {
  const spec = parseSpec({ name: 'b' });
  const r = result({ baseline: { bits_per_byte: 6.6, exact_match: 0.1 }, best: { bits_per_byte: 3.2, exact_match: 0.3 } });
  expect(formatResult(r, summaryMetricsOfSpec(spec)).split('\n').slice(-3)).toEqual([
    'held-out (untrained → winner):',
    '  bits_per_byte  6.6000 → 3.2000 bits/byte  (better)',
    '  exact_match    0.1000 → 0.3000 exact next token  (better)',
  ]);
  const byToken = parseSpec({ name: 'b', selection: { metric: 'exact_match' } });
  expect(formatResult(r, summaryMetricsOfSpec(byToken)).split('\n').slice(-2)).toEqual([
    '  exact_match    0.1000 → 0.3000 exact next token  (better)',
    '  bits_per_byte  6.6000 → 3.2000 bits/byte  (better)',
  ]);
});
