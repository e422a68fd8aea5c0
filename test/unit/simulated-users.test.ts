// The simulated user population and its prompt source, as pure functions: seeded, deterministic, train-split only,
// and judging by the true continuation.
import { splitOfFile, type SourceFile } from '../../tasks/builtin-code/eval-items';
import { drawTrainPrompts } from '../../tasks/builtin-code/train-prompts';
import { judge, leadingMatch, simulatedPopulation, type SimulatedUser, type Turn } from '../../tasks/builtin-code/simulated-users';

/** Paths whose split is known, found by probing the stable hash (the split rule is by path). */
function pathIn(split: 'train' | 'public', salt: string): string {
  for (let i = 0; ; i++) if (splitOfFile(`pkg/src/${salt}-${i}.ts`) === split) return `pkg/src/${salt}-${i}.ts`;
}

const CODE = [
  'import { a } from "./a";',
  'export function total(xs: number[]): number {',
  '  return xs.reduce((acc, x) => acc + x, 0);',
  '}',
  'export class Queue<T> {',
  '  private items: T[] = [];',
  '  push(item: T): void { this.items.push(item); }',
  '  pop(): T | undefined { return this.items.shift(); }',
  '}',
  '',
].join('\n');
const train: SourceFile[] = [
  { file: pathIn('train', 'a'), text: CODE },
  { file: pathIn('train', 'b'), text: CODE.replace(/xs/g, 'values').replace(/Queue/g, 'Stack') },
];

describe('simulatedPopulation', () => {
  test('is a pure function of its seed, and other seeds give other users', () => {
    const a = simulatedPopulation({ size: 40, seed: 7 });
    expect(simulatedPopulation({ size: 40, seed: 7 })).toEqual(a);
    expect(simulatedPopulation({ size: 40, seed: 8 })).not.toEqual(a);
    expect(a.map((u) => u.id)).toEqual(Array.from({ length: 40 }, (_, i) => `u${i}`));
    expect(new Set(a.map((u) => u.profile))).toEqual(new Set(['editor', 'rejecter', 'rater']));
    for (const u of a) expect([1, 2, 3, 4]).toContain(u.strictness);
  });

  test('honours the mix', () => {
    expect(simulatedPopulation({ size: 10, seed: 1, mix: { rater: 1, editor: 0, rejecter: 0 } }).every((u) => u.profile === 'rater')).toBe(
      true,
    );
    expect(() => simulatedPopulation({ size: 1, seed: 1, mix: { editor: 0, rejecter: 0, rater: 0 } })).toThrow(RangeError);
  });
});

describe('judge', () => {
  const turn = (completion: string): Turn => ({
    id: 'e1',
    campaignId: 'c',
    modelVersion: 'm',
    prompt: 'const y = ',
    completion,
    reference: 'a.b(c);',
  });
  const user = (profile: SimulatedUser['profile'], strictness = 2): SimulatedUser => ({ id: 'u0', profile, strictness });

  test('counts the leading tokens that match, and names the first miss', () => {
    expect(leadingMatch('a.b(d);', 'a.b(c);')).toEqual({ matched: 4, total: 7, firstMiss: { expected: 'c', got: 'd' } });
    expect(leadingMatch('a.b(c);\nmore', 'a.b(c);')).toEqual({ matched: 7, total: 7 });
    expect(leadingMatch('', 'a')).toEqual({ matched: 0, total: 1, firstMiss: { expected: 'a', got: '' } });
  });

  test('an editor accepts a good enough answer and otherwise sends the true continuation as the correction', () => {
    expect(judge(user('editor', 2), turn('a.x'))).toEqual({
      id: 'e1',
      campaignId: 'c',
      modelVersion: 'm',
      prompt: 'const y = ',
      output: 'a.x',
      kind: 'accept',
    });
    expect(judge(user('editor', 3), turn('a.x'))).toEqual({
      id: 'e1',
      campaignId: 'c',
      modelVersion: 'm',
      prompt: 'const y = ',
      output: 'a.x',
      kind: 'edit',
      correction: 'a.b(c);',
    });
  });

  test('a rejecter rejects with a comment naming the first wrong token', () => {
    expect(judge(user('rejecter', 9), turn('a.b(c);'))).toMatchObject({ kind: 'accept' });
    const e = judge(user('rejecter', 1), turn('x'));
    expect(e).toMatchObject({ kind: 'reject', comment: 'wrong at token 1: expected "a", got "x"' });
    expect(e.correction).toBeUndefined();
  });

  test('a rater rates 1 to 5 by the share of leading tokens right', () => {
    expect([' ', 'a', 'a.b(d', 'a.b(c)', 'a.b(c);'].map((c) => judge(user('rater'), turn(c)).rating)).toEqual([1, 2, 3, 4, 5]);
    expect(judge(user('rater'), turn('a.b(c);')).kind).toBe('rating');
  });
});

describe('drawTrainPrompts', () => {
  test('is deterministic per seed and stream; each prompt is followed in its file by its reference, to the end of a line at most', () => {
    const a = drawTrainPrompts(train, { count: 12, seed: 3, stream: 'r1', minPrompt: 20, maxPrompt: 60 });
    expect(a).toHaveLength(12);
    expect(drawTrainPrompts([...train].reverse(), { count: 12, seed: 3, stream: 'r1', minPrompt: 20, maxPrompt: 60 })).toEqual(a);
    expect(drawTrainPrompts(train, { count: 12, seed: 3, stream: 'r2', minPrompt: 20, maxPrompt: 60 })).not.toEqual(a);
    expect(new Set(a.map((p) => p.id)).size).toBe(12);
    for (const p of a) {
      const src = train.find((f) => f.file === p.sourceFile)!;
      const at = Number(p.id.slice(p.id.lastIndexOf(':') + 1));
      expect(src.text.slice(at - p.prompt.length, at + p.reference.length)).toBe(p.prompt + p.reference);
      expect(p.prompt.length).toBeGreaterThanOrEqual(20);
      expect(p.reference).not.toContain('\n');
      expect(p.reference.trim()).toBe(p.reference);
      expect(p.reference.length).toBeLessThanOrEqual(48);
    }
  });

  test('never cuts a prompt inside a surrogate pair', () => {
    const file = { file: pathIn('train', 'emoji'), text: '\u{1F600}' + ' '.repeat(9) + 'foo bar baz\n' };
    const drawn = drawTrainPrompts([file], { count: 3, seed: 1, minPrompt: 10, maxPrompt: 10 });
    expect(drawn.map((p) => p.reference).sort()).toEqual(['bar baz', 'baz', 'foo bar baz']);
    for (const p of drawn) expect(/\p{Cs}/u.test(p.prompt)).toBe(false);
    expect(drawn.find((p) => p.reference === 'foo bar baz')!.prompt).toBe(' '.repeat(9));
  });

  test('refuses files outside the train split', () => {
    const heldOut = { file: pathIn('public', 'p'), text: CODE };
    expect(() => drawTrainPrompts([...train, heldOut], { count: 1, seed: 1 })).toThrow(
      expect.objectContaining({ name: 'NotTrainSplitError', message: expect.stringContaining(heldOut.file) }),
    );
  });
});
