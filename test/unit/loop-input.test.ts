// The loops' input check (contracts/loop-input.ts): what a researcher may type in the Temporal UI, and the one line a
// wrong input gets.
import { innerLoopInputProblem, outerLoopInputProblem } from '../../contracts/loop-input';

test.each([
  [{ campaignVersionId: 'demo@0123456789ab' }],
  [{ campaignId: 'demo', budget: { experiments: 8, parallelism: 2 } }],
  [{ spec: { name: 'demo' }, iteration: 2 }],
  [{ campaignId: 'demo', spec: { name: 'demo' } }],
])('innerLoop accepts %j', (input) => expect(innerLoopInputProblem(input)).toBeUndefined());

test.each([
  [{ campaignId: 'demo' }],
  [{ campaignId: 'demo', iterations: 3, trigger: 'ui', innerBudget: { experiments: 4 } }],
  [{ spec: { name: 'demo' } }],
  [{ campaignId: 'demo', campaignVersionId: 'demo@0123456789ab' }],
])('outerLoop accepts %j', (input) => expect(outerLoopInputProblem(input)).toBeUndefined());

test.each([
  [null, 'not a JSON object (null)'],
  [{}, 'it names no campaign'],
  [{ campaignVersionId: 'demo' }, '"campaignVersionId" must be "NAME@HASH", not "demo"'],
  [{ campaignId: 'a', spec: { name: 'b' } }, '"campaignId" "a" differs from the spec\'s name "b"'],
  [{ campaignId: 'a', budget: { parallelism: 0 } }, '"budget.parallelism" must be a whole number ≥ 1'],
  [{ campaignId: 'a', Budget: {} }, 'unknown field "Budget" (did you mean "budget"?)'],
])('innerLoop refuses %j: %s', (input, problem) => {
  const line = innerLoopInputProblem(input)!;
  expect(line).toContain(problem);
  expect(line.startsWith('innerLoop input: ')).toBe(true);
  expect(line).toContain('; expected {"campaignId": "NAME"}');
  expect(line).not.toContain('\n');
});

test.each([
  [{ iterations: 1 }, 'it needs "campaignId" (or a "spec" with a "name")'],
  [{ campaignId: 'a', iterations: 1.5 }, '"iterations" must be a whole number ≥ 1'],
  [{ campaignId: 'a', innerBudget: 3 }, '"innerBudget" must be an object'],
  [{ campaignId: 'a', spec: 'x' }, '"spec" must be a campaign spec object'],
])('outerLoop refuses %j: %s', (input, problem) => expect(outerLoopInputProblem(input)).toContain(problem));
