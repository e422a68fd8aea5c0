// `outerLoop.signals` and `outerLoop.teacher.task` in the campaign spec: the default keeps today's behaviour, `[]`
// is valid (no feedback-derived examples), and a bad value is refused in one line naming the field.
import { loadSpecFile } from '../../cli/spec-file';
import { InvalidSpecError } from '../../core/spec';
import { parseSpec } from '../../tasks/task-spec';
import { exampleTask } from '../../services/example-tasks';
import { campaignVersionOf } from '../../services/campaigns/campaign-versions';
import { fastBuiltinSpec } from '../helpers/specs';

const withOuter = (outerLoop: Record<string, unknown>) => parseSpec(fastBuiltinSpec('s', { outerLoop } as never));
const refusal = (outerLoop: Record<string, unknown>): string => {
  try {
    withOuter(outerLoop);
  } catch (e) {
    if (e instanceof InvalidSpecError) return e.message;
    throw e;
  }
  return 'accepted';
};

test('the default is the reference builder alone; [] and any set of builders are valid', () => {
  expect(withOuter({}).outerLoop.signals).toEqual(['reference']);
  expect(withOuter({ signals: [] }).outerLoop.signals).toEqual([]);
  expect(withOuter({ signals: ['pairs', 'critique', 'revision', 'reference'] }).outerLoop.signals).toEqual([
    'pairs',
    'critique',
    'revision',
    'reference',
  ]);
  expect(withOuter({}).outerLoop.teacher.task).toBeUndefined();
});

test('an unknown builder, a builder twice, or revision without the eval-failure step is refused by field', () => {
  expect(refusal({ signals: ['refrence'] })).toMatch(/outerLoop\.signals\.0: .*"reference"/);
  expect(refusal({ signals: ['pairs', 'pairs'] })).toContain('outerLoop.signals: must not name a builder twice');
  expect(refusal({ signals: ['revision'], evalFailureSample: 0 })).toContain(
    'outerLoop.signals: "revision" runs in the eval-failure critique step; outerLoop.evalFailureSample must be above 0',
  );
  expect(refusal({ teacher: { task: '' } })).toContain('outerLoop.teacher.task');
});

test('a task without a built-in teacher is refused when the spec is registered', () => {
  expect(() => campaignVersionOf(fastBuiltinSpec('s', { outerLoop: { teacher: { task: 'builtin-code' } } } as never), 's.yaml')).toThrow(
    's.yaml is invalid:\nouterLoop.teacher.task: "builtin-code" has no built-in teacher (tasks with one: arithmetic)',
  );
  expect(
    campaignVersionOf(fastBuiltinSpec('s', { outerLoop: { teacher: { task: 'arithmetic' } } } as never)).spec.outerLoop.teacher.task,
  ).toBe('arithmetic');
});

test("the arithmetic task's spec names its own teacher", () => {
  expect(loadSpecFile(exampleTask('arithmetic').spec).outerLoop.teacher.task).toBe('arithmetic');
});

test('outerLoop.sourceShares: absent by default; shares in [0, 1] summing to at most 1, else refused by field', () => {
  expect(withOuter({}).outerLoop.sourceShares).toBeUndefined();
  expect(withOuter({ sourceShares: { user: 0.5, critic: 0.1 } }).outerLoop.sourceShares).toEqual({ user: 0.5, critic: 0.1 });
  expect(refusal({ sourceShares: { user: 0.7, critique: 0.4 } })).toContain('outerLoop.sourceShares: the shares must sum to at most 1');
  expect(refusal({ sourceShares: { user: 1.5 } })).toContain('outerLoop.sourceShares.user');
});
