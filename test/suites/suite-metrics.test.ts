// The metrics a suite reports by name, their per-item make-up, their direction, the spec defaults that follow the
// metric, and the gate's bounds and paired families on a metric other than the two built-in ones. Pure functions.
import { computeMetrics, higherIsBetter, itemsOfMetric, metricsOf, unreportedMetricProblem } from '../../core/eval-suite/suite-metrics';
import { predictBudgetOf } from '../../core/eval-suite/predict-budget';
import { parseSuite } from '../../core/eval-suite/suite-schema';
import { noCategoryRegression, pairedMetricsOf, runGate } from '../../core/gate/checks';
import { publicHeldoutGap } from '../../core/gate/integrity-checks';
import { boundOf, gateSettingsWithDefaults } from '../../core/gate/settings';
import { parseSpec } from '../../tasks/task-spec';
import { BUILTIN_SUITE_LABEL, builtinSuiteShape } from '../../tasks/builtin-code/suite-shape';

const item = (split: string, grader: string, category: string) => ({ split, grader, category });

describe('metricsOf', () => {
  test('a suite of several graders and categories reports pass_rate, each grader kind and each category of its public split', () => {
    const items = [
      item('public', 'exact_match', 'carry'),
      item('public', 'numeric_tolerance', 'no-carry'),
      item('public', 'exact_match', 'no-carry'),
      item('heldout', 'test_program', 'secret-category'),
      item('probe', 'exact_match', 'canary'),
    ];
    expect(metricsOf(items)).toEqual([
      'pass_rate',
      'accuracy',
      'category.carry',
      'category.no-carry',
      'grader.exact_match',
      'grader.numeric_tolerance',
    ]);
    expect(metricsOf(items, { split: 'heldout' })).toEqual(['pass_rate', 'accuracy', 'category.secret-category', 'grader.test_program']);
  });

  test('exact_token items add exact_match, loss items bits_per_byte (and no category or grader metric)', () => {
    const names = metricsOf([item('public', 'exact_token', 'identifier'), item('public', 'bits_per_byte', 'typescript')]);
    expect(names).toEqual(['pass_rate', 'accuracy', 'exact_match', 'bits_per_byte', 'category.identifier', 'grader.exact_token']);
    expect(metricsOf([item('public', 'bits_per_byte', 'typescript')])).toEqual(['bits_per_byte']);
  });

  test("the built-in task's shape reports the names its specs have always used", () => {
    const names = metricsOf(builtinSuiteShape());
    expect(names).toEqual(expect.arrayContaining(['bits_per_byte', 'exact_match', 'accuracy', 'pass_rate', 'grader.exact_token']));
    expect(names).toContain('category.identifier');
    expect(BUILTIN_SUITE_LABEL).toBe('builtin-code');
  });
});

describe('computeMetrics', () => {
  test('means per grader and category, pass rate over every graded item, counts beside them, loss copied', () => {
    const m = computeMetrics(
      [
        { grader: 'exact_token', category: 'identifier', score: 1 },
        { grader: 'exact_token', category: 'number', score: 0, error: true },
        { grader: 'numeric_tolerance', category: 'number', score: 1, canaryHit: true },
        { grader: 'exact_match', category: 'canary', score: 0, heldoutCanaryHit: true },
        { grader: 'bits_per_byte', category: 'typescript', score: 3.5 },
      ],
      2.25,
    );
    expect(m).toEqual({
      pass_rate: 0.5,
      accuracy: 0.5,
      exact_match: 0.5,
      'grader.exact_token': 0.5,
      'grader.numeric_tolerance': 1,
      'grader.exact_match': 0,
      'category.identifier': 1,
      'category.number': 0.5,
      'category.canary': 0,
      grader_errors: 1,
      canary_hits: 1,
      heldout_canary_hits: 1,
      bits_per_byte: 2.25,
    });
  });

  test('no graded items: only the loss, as before', () => {
    expect(computeMetrics([], 1.5)).toEqual({ bits_per_byte: 1.5 });
    expect(computeMetrics([])).toEqual({});
  });

  test('every name computeMetrics writes for a split is one metricsOf lists for it, and the reverse', () => {
    const items = [item('public', 'exact_match', 'a'), item('public', 'llm_judge', 'b'), item('public', 'bits_per_byte', 'c')];
    const written = Object.keys(
      computeMetrics(
        items.map((i) => ({ ...i, score: 1 })),
        1,
      ),
    ).filter((k) => !['grader_errors', 'canary_hits', 'heldout_canary_hits'].includes(k));
    expect(written.sort()).toEqual(metricsOf(items).sort());
  });
});

describe('itemsOfMetric and higherIsBetter', () => {
  const carry = { grader: 'exact_match', category: 'carry' };
  const loss = { grader: 'bits_per_byte', category: 'carry' };
  const token = { grader: 'exact_token', category: 'identifier' };
  test('each metric selects the items its per-item scores come from', () => {
    expect(itemsOfMetric('pass_rate')!(carry)).toBe(true);
    expect(itemsOfMetric('pass_rate')!(loss)).toBe(false);
    expect(itemsOfMetric('category.carry')!(carry)).toBe(true);
    expect(itemsOfMetric('category.carry')!(loss)).toBe(false);
    expect(itemsOfMetric('category.carry')!(token)).toBe(false);
    expect(itemsOfMetric('grader.exact_match')!(carry)).toBe(true);
    expect(itemsOfMetric('grader.exact_match')!(token)).toBe(false);
    expect(itemsOfMetric('exact_match')!(token)).toBe(true);
    expect(itemsOfMetric('exact_match')!(carry)).toBe(false);
    expect(itemsOfMetric('bits_per_byte')!(loss)).toBe(true);
    expect(itemsOfMetric('foo')).toBeUndefined();
    expect(itemsOfMetric('category.')).toBeUndefined();
  });
  test('bits_per_byte alone is lower-is-better', () => {
    expect(higherIsBetter('bits_per_byte')).toBe(false);
    for (const m of ['pass_rate', 'exact_match', 'category.carry', 'grader.numeric_tolerance']) expect(higherIsBetter(m)).toBe(true);
  });
  test('the refusal of an unreported name is one line listing the valid ones', () => {
    expect(unreportedMetricProblem('selection.metric', 'pass_rate', 's@1', ['pass_rate'])).toBeUndefined();
    expect(unreportedMetricProblem('selection.metric', 'foo', 's@1', ['pass_rate', 'category.carry'])).toBe(
      'selection.metric: "foo" is not a metric suite "s@1" reports; valid: pass_rate, category.carry',
    );
  });
});

describe('suite items and budgets', () => {
  const base = { name: 's', items: [{ id: 'a', split: 'public', grader: { kind: 'exact_match' }, prompt: 'p', reference: 'r' }] };
  test('maxBytes is optional, 1..65536, and replaces the grader default', () => {
    expect(parseSuite(base).items[0].maxBytes).toBeUndefined();
    expect(parseSuite({ ...base, items: [{ ...base.items[0], maxBytes: 16 }] }).items[0].maxBytes).toBe(16);
    expect(() => parseSuite({ ...base, items: [{ ...base.items[0], maxBytes: 0 }] })).toThrow(/items\[0\] "a": maxBytes/);
    expect(() => parseSuite({ ...base, items: [{ ...base.items[0], maxBytes: 65_537 }] })).toThrow(/maxBytes/);
    expect(predictBudgetOf({ grader: 'exact_match', maxBytes: 16 })).toBe(16);
    expect(predictBudgetOf({ grader: 'exact_match', maxBytes: null })).toBe(2048);
    expect(predictBudgetOf({ grader: 'exact_token' })).toBe(48);
  });
});

describe('the sealed test split', () => {
  const judge = { kind: 'llm_judge', rubric: 'r', model: 'm' };
  const suite = (items: Record<string, unknown>[], over: Record<string, unknown> = {}) => ({
    name: 's',
    rubrics: { r: 'Judge it.' },
    items: [{ id: 'p', split: 'public', grader: { kind: 'exact_match' }, prompt: 'p', reference: 'r' }, ...items],
    ...over,
  });
  test('a suite may carry test items, graded like held-out ones', () => {
    const s = parseSuite(
      suite([{ id: 't', split: 'test', grader: { kind: 'numeric_tolerance', absolute: 0 }, prompt: '1+1=', reference: '2' }]),
    );
    expect(s.items.map((i) => i.split)).toEqual(['public', 'test']);
  });
  test('an LLM judge cannot grade a test item, as it cannot a held-out one (both never leave the eval activity)', () => {
    expect(() => parseSuite(suite([{ id: 't', split: 'test', grader: judge, prompt: 'why?', reference: 'because' }]))).toThrow(
      /item "t": test items never leave the eval activity, so an external LLM judge cannot grade them/,
    );
    expect(() => parseSuite(suite([{ id: 'h', split: 'heldout', grader: judge, prompt: 'why?', reference: 'because' }]))).toThrow(
      /item "h": held-out items never leave the eval activity/,
    );
    expect(parseSuite(suite([{ id: 'q', split: 'public', grader: judge, prompt: 'why?', reference: 'because' }])).items).toHaveLength(2);
  });
  test('a held-out canary in a test item is refused: it would prove nothing about held-out text', () => {
    const canary = 'c0ffee0123456789abcdef0123456789abcdef01';
    const held = { id: 'h', split: 'heldout', grader: { kind: 'exact_match' }, prompt: `# ${canary}`, reference: 'x' };
    expect(parseSuite(suite([held], { heldoutCanaries: [canary] })).heldoutCanaries).toEqual([canary]);
    const test = { id: 't', split: 'test', grader: { kind: 'exact_match' }, prompt: `// ${canary}`, reference: 'y' };
    expect(() => parseSuite(suite([held, test], { heldoutCanaries: [canary] }))).toThrow(
      /heldoutCanaries\[0\]: "t" outside the held-out split/,
    );
  });
});

describe('spec defaults that follow the metric', () => {
  const spec = (over: Record<string, unknown>) =>
    parseSpec({ name: 'm', searchSpace: { lr: { type: 'float', low: 0.1, high: 1 } }, ...over });
  test('the built-in task keeps bits_per_byte/min; another metric defaults to max; an explicit mode stays', () => {
    expect(spec({}).selection).toEqual({ metric: 'bits_per_byte', mode: 'min' });
    expect(spec({}).outerLoop.promotion.metric).toBe('bits_per_byte');
    expect(spec({ selection: { metric: 'exact_match' } }).selection).toEqual({ metric: 'exact_match', mode: 'max' });
    expect(spec({ selection: { metric: 'category.identifier', mode: 'min' } }).selection.mode).toBe('min');
  });
  test('a custom task selects and gates on pass_rate by default, or on its selection metric', () => {
    const task = { kind: 'custom', dataset: 'd', suite: 's' };
    const s = spec({ task });
    expect(s.selection).toEqual({ metric: 'pass_rate', mode: 'max' });
    expect(s.outerLoop.promotion.metric).toBe('pass_rate');
    expect(spec({ task, selection: { metric: 'category.carry' } }).outerLoop.promotion.metric).toBe('category.carry');
    expect(spec({ task, outerLoop: { promotion: { metric: 'grader.exact_match' } } }).outerLoop.promotion.metric).toBe(
      'grader.exact_match',
    );
    // Parsing a parsed spec changes nothing (the stored version re-parses to itself).
    expect(parseSpec(JSON.parse(JSON.stringify(s)))).toEqual(s);
  });
});

describe('the gate on any suite metric', () => {
  test('bounds: named metrics keep theirs; others fall back by direction', () => {
    const g = gateSettingsWithDefaults({ maxCategoryRegression: { 'category.carry': 0.3 } });
    expect(boundOf(g.maxCategoryRegression, 'category.carry')).toBe(0.3);
    expect(boundOf(g.maxCategoryRegression, 'pass_rate')).toBe(g.maxCategoryRegression.exact_match);
    expect(boundOf(g.maxGapGrowth, 'grader.numeric_tolerance')).toBe(0.2);
    expect(boundOf({ bits_per_byte: 0.7, exact_match: 0.1 }, 'bits_per_byte')).toBe(0.7);
    expect(() => gateSettingsWithDefaults({ maxGapGrowth: { pass_rate: -1 } })).toThrow(/maxGapGrowth.pass_rate/);
  });

  test('the paired families: the metric, the built-in two, and pass_rate beside a narrower metric', () => {
    expect(pairedMetricsOf('bits_per_byte')).toEqual(['bits_per_byte', 'exact_match']);
    expect(pairedMetricsOf('pass_rate')).toEqual(['pass_rate', 'bits_per_byte', 'exact_match']);
    expect(pairedMetricsOf('category.carry')).toEqual(['category.carry', 'bits_per_byte', 'exact_match', 'pass_rate']);
  });

  test('a pass-rate metric is higher-is-better in the improvement, regression and gap checks', () => {
    const n = 60;
    const incumbent = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const candidate = incumbent.map((x, i) => (i % 3 === 1 ? 1 : x));
    const items = incumbent.map((inc, i) => ({ category: i < 30 ? 'carry' : 'no-carry', candidate: candidate[i], incumbent: inc }));
    const settings = gateSettingsWithDefaults({ metric: 'category.carry' });
    const better = runGate({ candidateCheckpointId: 'c', incumbentCheckpointId: 'i', items: { 'category.carry': items }, settings });
    expect(better.results.find((r) => r.rule === 'heldoutImprovement')).toMatchObject({ passed: true });
    const worse = items.map((i) => ({ ...i, candidate: i.incumbent, incumbent: i.candidate }));
    const regression = noCategoryRegression({
      candidateCheckpointId: 'c',
      incumbentCheckpointId: 'i',
      items: { pass_rate: worse },
      settings,
    });
    expect(regression.passed).toBe(false);
    expect(regression.reason).toMatch(/"carry" is worse on held-out pass_rate/);
    const gap = publicHeldoutGap({
      candidateCheckpointId: 'c',
      incumbentCheckpointId: 'i',
      items: {},
      settings,
      integrity: {
        means: [{ metric: 'pass_rate', candidatePublic: 0.9, incumbentPublic: 0.3, candidateHeldout: 0.31, incumbentHeldout: 0.3 }],
      },
    });
    expect(gap).toMatchObject({ passed: false, figures: { 'pass_rate.bound': 0.2 } });
  });
});
