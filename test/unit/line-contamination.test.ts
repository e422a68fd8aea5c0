// One dataset line against the suites' index, as `flywheel dataset add` asks: the field holding the overlap and the
// first n-gram it shares with the item, a canary by its id (before any item), nothing for a clean line.
import { ContaminationIndex } from '../../core/dataset/contamination';
import { lineContamination } from '../../core/dataset/line-contamination';
import { OverlapIndex } from '../../core/dataset/overlap';

const ITEM = 'export function slugify(title) { return title.toLowerCase(); } // slugify("A B") === "a b"';
const index = new ContaminationIndex(
  [
    { id: 's@1/h1', split: 'heldout', text: ITEM },
    { id: 's@1/t1', split: 'probe', text: 'class RingBuffer<T> { private items: T[] = []; }' },
  ],
  [{ id: 's@1#canary0', text: 'FWCANARY-0123456789' }],
);

test.each([
  ['a clean line', { prompt: 'Q: 2+2=', completion: '4', category: 'general', weight: 1 }, undefined],
  [
    'the item in the completion',
    { prompt: 'Write it:\n', completion: ITEM, category: 'general', weight: 1 },
    'completion: overlaps held-out item s@1/h1 (13-gram "export functi")',
  ],
  [
    'the item cut between prompt and completion: the prompt holds its first n-gram',
    { prompt: ITEM.slice(0, 40), completion: ITEM.slice(40), category: 'general', weight: 1 },
    'prompt: overlaps held-out item s@1/h1 (13-gram "export functi")',
  ],
  [
    'a probe item in a chat message',
    {
      messages: [
        { role: 'system' as const, content: 'You write TypeScript.' },
        { role: 'user' as const, content: 'class RingBuffer<T> {\n  private items: T[] = [];\n}' },
        { role: 'assistant' as const, content: 'ok' },
      ],
      category: 'general',
      weight: 1,
    },
    'messages.1.content: overlaps probe item s@1/t1 (13-gram "class RingBuf")',
  ],
  [
    'a canary cut between prompt and completion',
    { prompt: 'FWCANARY-01234', completion: '56789 and the item: ' + ITEM, category: 'general', weight: 1 },
    'prompt+completion: carries canary s@1#canary0',
  ],
])('%s', (_what, line, problem) => {
  expect(lineContamination(index, line)).toBe(problem);
});

test('firstSharedGram: the first n-gram of the text the eval text holds, whitespace collapsed', () => {
  const overlaps = new OverlapIndex([{ id: 'a', text: 'alpha beta gamma delta epsilon' }], { n: 5 });
  expect(overlaps.firstSharedGram('gamma\n\n delta', 'a')).toBe('gamma');
  // "zz ma\n delta" reads "zz ma delta": its fourth n-gram, "ma de", is the eval text's.
  expect(overlaps.firstSharedGram('zz ma\n delta', 'a')).toBe('ma de');
  expect(overlaps.firstSharedGram('nothing shared here', 'a')).toBeUndefined();
  expect(overlaps.firstSharedGram('gamma', 'unknown')).toBeUndefined();
  expect(new OverlapIndex([{ id: 'short', text: 'abc' }]).empty).toBe(true);
});
