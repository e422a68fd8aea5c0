// The overlap check on a feedback event's raw fields (issue 33, item 6): a user prompt equal to a held-out code
// prompt, wrapped as a critic example, escapes the check on the built example, and is caught on its raw fields.
import { CONTAMINATION_THRESHOLDS } from '../../core/dataset/contamination';
import { OverlapIndex } from '../../core/dataset/overlap';
import { rawOverlapOf, rawTextsOf } from '../../core/dataset/raw-overlap';
import { buildSignals, type CritiqueForSignals } from '../../core/dataset/signal-builders';
import { critique } from '../../core/teacher/builtin-teacher';

/** A held-out completion item as the built-in task cuts them: a file's lines, then the next token. */
const item = {
  id: 'code@1/h-7',
  prompt: [
    'export function greet(name: string): string {',
    '  const parts = ["Hello", name];',
    '  if (name === "") {',
    '    return "Hello, world";',
    '  }',
    '  return parts.join(", ") + "!";',
    '}',
    '',
    'export function shout(s: string): string {',
    '  return s.',
  ].join('\n'),
  reference: 'toUpperCase',
};
const index = new OverlapIndex([{ id: item.id, text: item.prompt + item.reference }], CONTAMINATION_THRESHOLDS);

/** A user's edit whose prompt is the held-out prompt, critiqued by the built-in teacher. */
function leakedEdit(): CritiqueForSignals {
  const failure = { prompt: item.prompt, output: 'toLowerCase', reference: item.reference, category: 'ts' };
  const taught = critique(failure);
  return {
    critiqueId: 'c/critique/e-leak',
    sourceKind: 'feedback',
    sourceId: 'e-leak',
    text: taught.text,
    signals: taught.signals,
    event: { prompt: failure.prompt, output: failure.output },
  };
}

test("the critic example of a held-out prompt passes the check on the built example, and the event's raw fields do not", () => {
  const c = leakedEdit();
  const { examples } = buildSignals(c, ['critique']);
  expect(examples).toHaveLength(1);
  // The check as it ran on the built example: the escaped prompt shares under half the item's n-grams, so it was kept,
  // though its critique names the expected token.
  const built = examples[0].prompt + examples[0].completion;
  expect(index.overlapOf(built)).toBeUndefined();
  expect(examples[0].completion).toContain(item.reference);
  // The same event on its raw fields: its prompt and any answer hold the item.
  expect(rawOverlapOf(index, c)).toEqual([item.id]);
});

test('every raw answer is read after the raw prompt: output, correction, revision, critique, and a signal prompt of its own', () => {
  const c = leakedEdit();
  const texts = rawTextsOf({ ...c, revision: { output: 'toUpperCase()' } });
  for (const answer of ['toLowerCase', item.reference, 'toUpperCase()', c.text]) expect(texts).toContain(item.prompt + answer);
  // A teacher's own prompt is read with its answers too: here the held-out prompt is only in the signal.
  const hidden = {
    text: 'The answer was wrong.',
    signals: [{ kind: 'sft' as const, prompt: item.prompt, target: item.reference, weight: 1, category: 'ts' }],
    event: { prompt: 'Complete the call:', output: 'x' },
  };
  expect(rawOverlapOf(index, hidden)).toEqual([item.id]);
});

test('an event that shares only idioms with the item yields no overlap', () => {
  const clean = {
    text: 'expected "trim", produced "strip"',
    signals: [],
    event: { prompt: 'export function tidy(s: string): string {\n  return s.', output: 'strip' },
  };
  expect(rawOverlapOf(index, clean)).toEqual([]);
});
