// The overlap check's n-gram hashes are those of the normalized text (whitespace runs collapsed, ends trimmed), made
// without building it: the same for any spacing of the same words, and one per n-gram of the normalized string.
import { isSpace, NgramHasher, normalizeForOverlap } from '../../core/dataset/ngram-hashes';

test('isSpace is exactly the \\s of regular expressions (and what trim() removes)', () => {
  for (let c = 0; c < 0x10000; c++) {
    const ch = String.fromCharCode(c);
    expect([c, isSpace(c)]).toEqual([c, /\s/.test(ch)]);
    if (isSpace(c)) expect(ch.trim()).toBe('');
  }
});

test('the hashes of a text are those of its normalized form, one per n-gram, whatever its spacing', () => {
  const hashes = (h: NgramHasher, s: string) => {
    const count = h.hash(s);
    return Array.from({ length: count }, (_, g) => h.key(g));
  };
  const h = new NgramHasher(5);
  // A seeded mix of letters, spaces, tabs, newlines and a no-break space.
  let seed = 3;
  const pick = (s: string) => s[(seed = (seed * 48271) % 2147483647) % s.length];
  for (let t = 0; t < 200; t++) {
    const text = Array.from({ length: 1 + (t % 60) }, () => pick('abcde  \t\n\u00a0xyz')).join('');
    const normalized = normalizeForOverlap(text);
    const got = hashes(h, text);
    expect(got).toEqual(hashes(h, normalized));
    expect(got).toHaveLength(Math.max(0, normalized.length - 4));
    // Each n-gram's key depends on its 5 characters alone (framed by letters, so no end is trimmed).
    got.forEach((k, g) => expect(hashes(h, `q${normalized.slice(g, g + 5)}q`)[1]).toBe(k));
  }
  expect(hashes(h, 'alpha \n\t beta')).toEqual(hashes(h, '  alpha beta\n'));
  expect(hashes(h, 'abcd')).toEqual([]);
});
