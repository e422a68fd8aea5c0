// Completions are cut to a byte budget: never past it, never inside a character.
import { utf8Prefix } from '../../core/utf8-prefix';

test.each([
  ['abc', 2, 'ab'],
  ['abc', 3, 'abc'],
  ['abc', 0, ''],
  ['héllo', 2, 'h'],
  ['héllo', 3, 'hé'],
  ['a€b', 3, 'a'],
  ['a€b', 4, 'a€'],
  ['😀x', 3, ''],
  ['😀x', 4, '😀'],
  ['😀x', 5, '😀x'],
])('%j cut to %i bytes is %j', (s, n, cut) => {
  expect(utf8Prefix(s, n)).toBe(cut);
  expect(Buffer.byteLength(utf8Prefix(s, n))).toBeLessThanOrEqual(n);
});

test('a prefix is the longest that fits', () => {
  const s = 'ä'.repeat(50) + 'z';
  for (let n = 0; n < 110; n++)
    expect(Buffer.byteLength(utf8Prefix(s, n))).toBe(Math.min(Buffer.byteLength(s), n - (n % 2 === 1 && n < 101 ? 1 : 0)));
});
