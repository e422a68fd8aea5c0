// The built-in teacher: critiques derived from the verifiable difference, and the signals made from them.
import { BUILTIN_PREAMBLE, BUILTIN_TEACHER_PROMPT_VERSION, critique, errorWeight } from '../../core/teacher/builtin-teacher';

const prompt = 'function add(a: number, b: number) {\n';

test('a wrong output: says it is mechanical, where it diverges, what is missing and extra; sft and pair signals', () => {
  const c = critique({ prompt, output: '  return a - b;\n}', reference: '  return a + b;\n}' });
  expect(c.text.startsWith(BUILTIN_PREAMBLE)).toBe(true);
  expect(c.text).toContain('no model');
  expect(c.text).toContain('first diverges from the reference at token 3 of 6 (line 1, column 12): expected "+", produced "-"');
  expect(c.text).toContain('Missing from the output (in the reference only): "+"');
  expect(c.text).toContain('Extra in the output (not in the reference): "-"');
  // 1 missing + 1 extra of 6 + 6 tokens.
  const weight = errorWeight(1, 1, 6, 6);
  expect(weight).toBe(1.167);
  expect(c.signals).toEqual([
    { kind: 'sft', prompt, target: '  return a + b;\n}', weight, category: 'code' },
    { kind: 'pair', prompt, chosen: '  return a + b;\n}', rejected: '  return a - b;\n}', weight },
  ]);
});

test('an empty output weighs 2 and yields no pair', () => {
  const c = critique({ prompt, output: '', reference: 'return a + b;' });
  expect(c.text).toContain('The output is empty; expected 5 tokens starting with "return"');
  expect(c.signals).toEqual([{ kind: 'sft', prompt, target: 'return a + b;', weight: 2, category: 'code' }]);
});

test('an output that stops early, runs on, or differs in whitespace only', () => {
  expect(critique({ prompt, output: 'return a', reference: 'return a + b;' }).text).toContain(
    'stops early: it matches the first 2 of 5 reference tokens, then ends where "+" was expected',
  );
  expect(critique({ prompt, output: 'return a; foo()', reference: 'return a;' }).text).toContain(
    'matches all 3 reference tokens, then continues with "foo" and 2 more token(s)',
  );
  const ws = critique({ prompt, output: 'return  a;', reference: 'return a;' });
  expect(ws.text).toContain('differs only in whitespace, first at line 1, column 8');
  expect(ws.signals[0]).toMatchObject({ kind: 'sft', weight: 1 });
});

test('an output equal to the reference weighs 1 and yields no pair; deterministic', () => {
  const f = { prompt, output: 'return a;', reference: 'return a;', category: 'typescript' };
  const c = critique(f);
  expect(c.text).toContain('already matches the reference');
  expect(c.signals).toEqual([{ kind: 'sft', prompt, target: 'return a;', weight: 1, category: 'typescript' }]);
  expect(critique(f)).toEqual(c);
  expect(BUILTIN_TEACHER_PROMPT_VERSION).toMatch(/^builtin-/);
});

test('long token lists and quotes are cut', () => {
  const reference = Array.from({ length: 30 }, (_, i) => `name${i}`).join(' ');
  const c = critique({ prompt, output: 'x'.repeat(500), reference });
  expect(c.text).toContain('and 22 more');
  expect(c.text).toContain('…');
  expect(c.text.length).toBeLessThan(1500);
});
