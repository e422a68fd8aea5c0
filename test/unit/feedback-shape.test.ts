// What feedback examples take from the task's data (core/dataset/feedback-shape.ts): the category of the prompt (the
// event's own, the same prompt's, the longest shared prefix's, the teacher's, the dataset's most common) and the
// completions' terminator.
import { FeedbackShape, MIN_SHARED_PREFIX } from '../../core/dataset/feedback-shape';

const data = [
  { prompt: 'def add(a, b):', completion: ' return a + b\n', category: 'python' },
  { prompt: 'function add(a, b) {', completion: ' return a + b; }\n', category: 'js' },
  { prompt: 'function sub(a, b) {', completion: ' return a - b; }\n', category: 'js' },
  { prompt: 'SELECT * FROM t', completion: ';\n', category: 'sql' },
  { prompt: null, completion: 'corpus text\n', category: 'js' },
];
const shape = new FeedbackShape(data);

test('the category: the event’s own, the same prompt’s, the nearest prefix’s, the teacher’s, the most common', () => {
  const teacher = () => 'teacher-says';
  expect(shape.categoryOf({ prompt: 'def add(a, b):', category: 'mine' }, teacher)).toBe('mine');
  expect(shape.categoryOf({ prompt: 'def add(a, b):', category: null }, teacher)).toBe('python');
  // No exact match: the example sharing the longest prefix (here 12 characters), whatever order the data came in.
  expect(shape.categoryOf({ prompt: 'def add(x, y):' }, teacher)).toBe('python');
  expect(shape.categoryOf({ prompt: 'function mul(a, b) {' }, teacher)).toBe('js');
  expect(new FeedbackShape([...data].reverse()).categoryOf({ prompt: 'SELECT * FROM u' })).toBe('sql');
  // Fewer than MIN_SHARED_PREFIX characters in common: not near; the teacher, else the most common category.
  expect('SELECT'.length).toBeLessThan(MIN_SHARED_PREFIX);
  expect(shape.categoryOf({ prompt: 'SELEC' }, teacher)).toBe('teacher-says');
  expect(shape.categoryOf({ prompt: 'what is 2+2?' }, () => undefined)).toBe('js');
  expect(new FeedbackShape([]).categoryOf({ prompt: 'x' })).toBeUndefined();
});

test('the terminator: a completion without the dataset’s trailing newline gets it; no convention, no change', () => {
  expect(shape.terminator).toBe('\n');
  expect(shape.normalise('return 1')).toBe('return 1\n');
  expect(shape.normalise('return 1\n')).toBe('return 1\n');
  expect(shape.normalise('')).toBe('');
  const mixed = new FeedbackShape([
    { prompt: 'a', completion: 'x\n', category: 'c' },
    { prompt: 'b', completion: 'y', category: 'c' },
  ]);
  expect(mixed.terminator).toBeUndefined();
  expect(mixed.normalise('z')).toBe('z');
});
