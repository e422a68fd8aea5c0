// `flywheel propose --params`: knob values read against the search space (core/knob-values.ts).
import { knobValueProblems, parseKnobValues } from '../../core/knob-values';
import type { SearchSpace } from '../../core/spec';

const space: SearchSpace = {
  lr: { type: 'float', low: 1e-4, high: 1e-2, log: true },
  steps: { type: 'int', low: 10, high: 100, log: false },
  hidden: { type: 'categorical', choices: [32, 64] },
  act: { type: 'categorical', choices: ['relu', '64'] },
} as SearchSpace;

test('values are typed by their knob: numbers for ranges, the spelled choice for categoricals', () => {
  expect(parseKnobValues('lr=0.003, steps=20,hidden=64,act=64', space)).toEqual({
    params: { lr: 0.003, steps: 20, hidden: 64, act: '64' },
  });
});

test('each bad value is one line naming the knob', () => {
  const problem = (text: string) => (parseKnobValues(text, space) as { problem: string }).problem;
  expect(problem('lr=0.5')).toBe('lr: 0.5 is outside [0.0001, 0.01]');
  expect(problem('steps=2.5')).toBe('steps: 2.5 is not an integer');
  expect(problem('steps=')).toBe('steps: NaN is not a finite number');
  expect(problem('hidden=48')).toBe('hidden: 48 is not one of 32, 64');
  expect(problem('act=tanh')).toBe('act: "tanh" is not one of "relu", "64"');
  expect(problem('hiden=32')).toBe('hiden: not a knob of the search space (did you mean "hidden"? its knobs: lr, steps, hidden, act)');
  expect(problem('steps=20,steps=30')).toBe('steps: given twice');
  expect(problem('steps')).toBe('"steps" is not knob=value');
  expect(knobValueProblems(space, { steps: 20, hidden: 48, depth: 2 })).toEqual([
    'hidden: 48 is not one of 32, 64',
    'depth: not in the search space',
  ]);
});
