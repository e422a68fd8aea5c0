// The contamination check: exact containment, near-duplicates above the threshold, canaries; unrelated code passes.
import { findOverlaps } from '../../core/dataset/overlap';

const evalA = `export function parseHeader(line: string): { key: string; value: string } {\n  const at = line.indexOf(':');\n  return { key: line.slice(0, at).trim(), value: line.slice(at + 1).trim() };\n}`;
const evalB = `class RingBuffer<T> {\n  private items: T[] = [];\n  push(x: T) { this.items.push(x); if (this.items.length > 8) this.items.shift(); }\n}`;
const canary = 'FLYWHEEL-CANARY 7f3a9c1e-4b2d-4e8a-9d61-0c5b2a7e8f13';
const evals = [
  { id: 'a', text: evalA },
  { id: 'b', text: evalB },
  { id: 'canary', text: canary },
];

test('a candidate containing an eval text verbatim (re-indented) is found, with the eval id', () => {
  const text = `// a file\nimport x from 'y';\n\n${evalA.replace(/\n {2}/g, '\n        ')}\n\nexport const z = 1;\n`;
  expect(findOverlaps([{ key: 'k1', text }], evals)).toEqual([{ key: 'k1', evalIds: ['a'], exact: true, share: 1 }]);
});

test('a near-duplicate above the threshold is found; below it, not', () => {
  const near = evalB.replace('> 8', '> 16').replace('shift()', 'splice(0, 1)');
  const [hit] = findOverlaps([{ key: 'near', text: near }], evals);
  expect(hit).toMatchObject({ key: 'near', evalIds: ['b'], exact: false });
  expect(hit.share).toBeGreaterThanOrEqual(0.5);
  expect(hit.share).toBeLessThan(1);
  // The first third of evalB alone is under half its n-grams.
  expect(findOverlaps([{ key: 'part', text: evalB.slice(0, Math.floor(evalB.length / 3)) }], evals)).toEqual([]);
  expect(findOverlaps([{ key: 'part', text: evalB.slice(0, Math.floor(evalB.length / 3)) }], evals, { threshold: 0.2 })).toHaveLength(1);
});

test('unrelated code sharing idioms is not flagged', () => {
  const text = `export function total(xs: number[]): number {\n  let s = 0;\n  for (const x of xs) s += x;\n  return s;\n}\nconst at = line.indexOf(';');\n`;
  expect(findOverlaps([{ key: 'u', text }], evals)).toEqual([]);
});

test('a canary string anywhere in a candidate is found; each candidate lists every eval it overlaps', () => {
  const out = findOverlaps(
    [
      { key: 'clean', text: 'const a = 1;\n' },
      { key: 'leak', text: `/* ${canary} */\n${evalB}` },
    ],
    evals,
  );
  expect(out).toEqual([{ key: 'leak', evalIds: ['b', 'canary'], exact: true, share: 1 }]);
});

test('eval texts shorter than n are not checked; ~1 MB against 500 eval items is fast', () => {
  expect(findOverlaps([{ key: 'x', text: 'return x;' }], [{ id: 's', text: 'return x;' }])).toEqual([]);
  // mulberry32: a seeded generator good enough that no two random lines repeat.
  let seed = 1;
  const r = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const word = () => Array.from({ length: 3 + Math.floor(r() * 8) }, () => String.fromCharCode(97 + Math.floor(r() * 26))).join('');
  const line = () => `  const ${word()} = ${word()}(${word()}, ${word()});\n`;
  const candidates = Array.from({ length: 250 }, (_, i) => ({ key: `c${i}`, text: Array.from({ length: 100 }, line).join('') }));
  const many = Array.from({ length: 500 }, (_, i) => ({ id: `e${i}`, text: Array.from({ length: 6 }, line).join('') }));
  many[123] = { id: 'e123', text: candidates[77].text.slice(400, 700) };
  const t0 = Date.now();
  const out = findOverlaps(candidates, many);
  const ms = Date.now() - t0;
  expect(candidates.reduce((n, c) => n + c.text.length, 0)).toBeGreaterThan(900_000);
  expect(out.map((o) => [o.key, o.evalIds])).toEqual([['c77', ['e123']]]);
  // A guard against a quadratic blow-up, not a benchmark (about 0.7 s under tsx, 2-3 s under jest on this machine).
  expect(ms).toBeLessThan(10_000);
});
