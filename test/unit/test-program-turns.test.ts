// The test-program wire's turn rules (core/graders/test-program-turns.ts): one side speaks at a time, an answer goes
// to the innermost pending call only, and the output may only call the tests' callbacks, never deeper than the cap.
import { MAX_NESTED_CALLS, TurnTracker } from '../../core/graders/test-program-turns';

const call = (id: number, op = 'call') => ({ id, op, h: 1, args: [] });
const answer = (re: number) => ({ re, ok: 1 });

test('the tests speak first; the output answers, and may call back while the tests wait on it', () => {
  const t = new TurnTracker();
  expect(t.accept('output', answer(1))).toBe('a message out of turn');
  expect(t.accept('tests', call(1, 'global'))).toBeUndefined();
  expect(t.testsWaiting).toBe(true);
  expect(t.accept('tests', call(2))).toBe('a message out of turn');
  expect(t.accept('output', call(7))).toBeUndefined(); // a callback of the tests, called back
  expect(t.accept('output', answer(1))).toBe('a message out of turn');
  expect(t.accept('tests', call(2, 'get'))).toBeUndefined(); // the callback asks the output something: nested
  expect(t.accept('output', answer(2))).toBeUndefined();
  expect(t.accept('tests', answer(1))).toBe('an answer to no pending call'); // the innermost pending call is 7
  expect(t.accept('tests', answer(7))).toBeUndefined();
  expect(t.accept('output', answer(1))).toBeUndefined();
  expect(t.idle).toBe(true);
  expect(t.calls).toBe(3);
});

test("the output may call nothing but the tests' callbacks, and no message of another shape passes", () => {
  const t = new TurnTracker();
  t.accept('tests', call(1, 'call'));
  expect(t.accept('output', call(9, 'get'))).toMatch(/^a call of "get": the output may only call the tests' callbacks$/);
  expect(t.accept('output', { t: 'done', item: 1, ok: true })).toBe('a message that is neither a call nor an answer');
  expect(t.accept('output', [1])).toBe('a message that is not an object');
  expect(t.accept('output', { op: 'call' })).toBe('a call without an id');
});

test(`calls nest at most ${MAX_NESTED_CALLS} deep`, () => {
  const t = new TurnTracker();
  for (let k = 0; k < MAX_NESTED_CALLS; k++) expect(t.accept(k % 2 === 0 ? 'tests' : 'output', call(k + 1))).toBeUndefined();
  expect(t.accept('tests', call(MAX_NESTED_CALLS + 1))).toBe(`calls nested deeper than ${MAX_NESTED_CALLS}`);
});
