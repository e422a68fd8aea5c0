// The arithmetic task's teacher: critiques that say which column's carry was dropped (or invented) and which digit
// was wrong, the category of a sum, and the verifier the `revision` signal trusts.
import { ARITHMETIC_PREAMBLE, arithmeticTeacher, critiqueSum } from '../../tasks/arithmetic/teacher';
import { BUILTIN_PREAMBLE } from '../../core/teacher/builtin-teacher';
import { taskTeacherOf, UnknownTaskTeacherError } from '../../services/example-tasks';

const sum = (a: number, b: number) => ({ a, b });

test('a dropped carry: names the column it came from, the digit that is wrong and what it should be', () => {
  // 23+58: 3+8=11 carries into the tens column; 071 dropped it.
  expect(critiqueSum(sum(23, 58), '071\n')).toEqual({
    text: '23+58 is 081, a sum that carries, from the units column (3+8=11). The output 071 is wrong: the tens digit is 7, not 8: the carry from the units column (3+8=11) was dropped.',
    wrong: 1 / 3,
  });
  // 75+41: the tens column (7+4=11) carries into the hundreds.
  expect(critiqueSum(sum(75, 41), '016').text).toContain(
    'the hundreds digit is 0, not 1: the carry from the tens column (7+4=11) was dropped',
  );
  // Two carries: the tens column adds the units' carry (9+9+1=19), and its own carry reaches the hundreds.
  expect(critiqueSum(sum(99, 99), '098').text).toContain(
    'the hundreds digit is 0, not 1: the carry from the tens column (9+9+1=19) was dropped',
  );
  expect(critiqueSum(sum(99, 99), '188').text).toContain(
    'the tens digit is 8, not 9: the carry from the units column (9+9=18) was dropped',
  );
});

test('an invented carry, a plain wrong digit, a right sum badly written, no number at all', () => {
  expect(critiqueSum(sum(23, 51), '084').text).toContain(
    'the tens digit is 8, not 7: a carry was added, but the units column does not carry (3+1=4)',
  );
  expect(critiqueSum(sum(23, 51), '084').text).toContain('a sum with no carry');
  const two = critiqueSum(sum(12, 34), '057');
  expect(two.text).toContain('the units digit is 7, not 6 (2+4=6); the tens digit is 5, not 4: a carry was added');
  expect(two.wrong).toBe(2 / 3);
  expect(critiqueSum(sum(23, 58), '81\n')).toEqual({
    text: '23+58 is 081, a sum that carries, from the units column (3+8=11). The output\'s sum is right but written "81"; answers are written fixed-width, 3 digits: 081.',
    wrong: 0,
  });
  expect(critiqueSum(sum(23, 51), 'abc')).toEqual({
    text: '23+51 is 074, a sum with no carry. The output "abc" holds no number.',
    wrong: 1,
  });
});

test('the teacher: its preamble, the reference as the target, the category of the sum, weight 1 + wrong digits / 3', () => {
  const c = arithmeticTeacher.critique({ prompt: '23+58=', output: '071\n', reference: '081\n' });
  expect(c.text.startsWith(ARITHMETIC_PREAMBLE)).toBe(true);
  expect(c.text).toContain('the carry from the units column (3+8=11) was dropped');
  expect(c.text).not.toContain('token');
  expect(c.signals).toEqual([
    { kind: 'sft', prompt: '23+58=', target: '081\n', weight: 1.333, category: 'carry' },
    { kind: 'pair', prompt: '23+58=', chosen: '081\n', rejected: '071\n', weight: 1.333 },
  ]);
  // A prompt that is not a sum gets the generic token diff, which says how it was made.
  expect(arithmeticTeacher.critique({ prompt: 'hello', output: 'x', reference: 'y' }).text.startsWith(BUILTIN_PREAMBLE)).toBe(true);
});

test('categories and the verifier read the sum; a prompt that is not one is left to the reference', () => {
  expect(arithmeticTeacher.categoryOf!('23+58=')).toBe('carry');
  expect(arithmeticTeacher.categoryOf!('23+51=')).toBe('no-carry');
  expect(arithmeticTeacher.categoryOf!('what is 2+2?')).toBeUndefined();
  expect(arithmeticTeacher.verify!('23+58=', '081\n')).toBe(true);
  expect(arithmeticTeacher.verify!('23+58=', '81')).toBe(true);
  expect(arithmeticTeacher.verify!('23+58=', '071\n')).toBe(false);
  expect(arithmeticTeacher.verify!('23+58=', '\n')).toBe(false);
  expect(arithmeticTeacher.verify!('what is 2+2?', '4')).toBeUndefined();
});

test('chosen by the task the spec names; a task without a teacher is refused by name', () => {
  expect(taskTeacherOf('arithmetic')).toBe(arithmeticTeacher);
  expect(taskTeacherOf(undefined)).toBeUndefined();
  expect(() => taskTeacherOf('builtin-code')).toThrow(UnknownTaskTeacherError);
  expect(() => taskTeacherOf('nope')).toThrow('outerLoop.teacher.task: "nope" has no built-in teacher (tasks with one: arithmetic)');
});
