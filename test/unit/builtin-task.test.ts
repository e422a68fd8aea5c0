// The built-in code task's data: splits disjoint by file and stable, a corpus that is the same bytes on every
// build, deterministic eval items whose references really follow their prompts, and the grader's tokens.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildBuiltinCorpus, collectBuiltinCorpus, type CorpusManifest } from '../../tasks/builtin-code/corpus';
import { buildCompletionItems, buildLossItems, codeMask, splitOfFile, type SourceFile } from '../../tasks/builtin-code/eval-items';
import { BUILTIN_DEFAULT_PARAMS, BUILTIN_SEARCH_SPACE } from '../../tasks/builtin-code/search-space';
import { evalSplitFiles, readTrainFiles } from '../../tasks/builtin-code/corpus-cache';
import { piecesOf } from '../../tasks/builtin-code/train-pieces';
import { firstToken, tokenAt } from '../../core/graders/code-tokens';
import { resolveTrainParams } from '../../trainers/charlm/train';
import { searchSpaceSchema } from '../../core/spec';

let scratch: string;
let manifest: CorpusManifest;
let publicFiles: SourceFile[];

let heldoutFiles: SourceFile[];
let testFiles: SourceFile[];

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'builtin-task-'));
  manifest = await buildBuiltinCorpus(path.join(scratch, 'a'));
  const corpus = await collectBuiltinCorpus();
  ({ public: publicFiles, heldout: heldoutFiles } = corpus.splits);
  testFiles = corpus.test;
});

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('splitOfFile', () => {
  test('is a stable function of the path, close to 80/10/10', () => {
    const paths = Array.from({ length: 3000 }, (_, i) => `pkg/src/file-${i}.ts`);
    const counts = { train: 0, public: 0, heldout: 0 };
    for (const p of paths) counts[splitOfFile(p)] += 1;
    expect(counts.train / 3000).toBeGreaterThan(0.76);
    expect(counts.train / 3000).toBeLessThan(0.84);
    expect(counts.public / 3000).toBeGreaterThan(0.08);
    expect(counts.heldout / 3000).toBeGreaterThan(0.08);
    expect(paths.map(splitOfFile)).toEqual(paths.map(splitOfFile));
    expect(splitOfFile('zod/src/v4/core/api.ts')).toBe(splitOfFile('zod/src/v4/core/api.ts'));
  });
});

describe('buildBuiltinCorpus', () => {
  test('writes only the training side: no eval split reaches the disk', () => {
    expect(fs.readdirSync(path.join(scratch, 'a')).sort()).toEqual(['manifest.json', 'train.txt']);
    const train = fs.readFileSync(path.join(scratch, 'a', 'train.txt'), 'utf8');
    expect(publicFiles.length).toBeGreaterThan(0);
    for (const f of publicFiles.slice(0, 20)) expect(train.includes(f.text)).toBe(false);
  });

  test('writes the same bytes on every build', async () => {
    const again = await buildBuiltinCorpus(path.join(scratch, 'b'));
    expect(again.contentSha256).toBe(manifest.contentSha256);
    for (const f of ['train.txt', 'manifest.json']) {
      expect(fs.readFileSync(path.join(scratch, 'b', f)).equals(fs.readFileSync(path.join(scratch, 'a', f)))).toBe(true);
    }
  });

  test('records permissive licences, versions and sizes in the intended range', () => {
    expect(manifest.packages.length).toBeGreaterThanOrEqual(5);
    for (const p of manifest.packages) {
      expect(['MIT', 'ISC', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', '0BSD']).toContain(p.license);
      expect(p.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(p.files).toBeGreaterThan(0);
    }
    const total = manifest.splits.train.bytes + manifest.splits.public.bytes + manifest.splits.heldout.bytes;
    expect(total).toBeGreaterThan(400_000);
    expect(total).toBeLessThan(1_500_000);
    expect(manifest.splits.public.files).toBeGreaterThan(0);
    expect(manifest.splits.heldout.files).toBeGreaterThan(0);
    expect(JSON.stringify(manifest)).not.toContain(scratch); // no absolute paths: the manifest is machine-independent
  });

  test('splits are disjoint by file and follow splitOfFile', () => {
    const heldout = heldoutFiles;
    const bySplit = { train: new Set<string>(), public: new Set<string>(), heldout: new Set<string>() };
    for (const f of manifest.files) {
      expect(splitOfFile(f.file)).toBe(f.split);
      bySplit[f.split].add(f.file);
    }
    expect(new Set(publicFiles.map((f) => f.file))).toEqual(bySplit.public);
    expect(new Set(heldout.map((f) => f.file))).toEqual(bySplit.heldout);
    for (const f of bySplit.public) expect(bySplit.train.has(f) || bySplit.heldout.has(f)).toBe(false);
    // No eval file's text reaches the training text.
    const train = fs.readFileSync(path.join(scratch, 'a', 'train.txt'), 'utf8');
    for (const f of [...publicFiles, ...heldout].filter((x) => x.text.length > 2000)) expect(train.includes(f.text)).toBe(false);
    // train.txt is the train files joined by the separator, in manifest order.
    const trainSizes = manifest.files.filter((f) => f.split === 'train').map((f) => f.bytes);
    expect(Buffer.byteLength(train)).toBe(trainSizes.reduce((a, b) => a + b, 0) + (trainSizes.length - 1) * manifest.separator.length);
  });

  test('the sealed test split is cut from files the package cap leaves out: in no split, not in the training text', () => {
    expect(testFiles.length).toBeGreaterThan(0);
    const listed = new Set(manifest.files.map((f) => f.file));
    expect(testFiles.filter((f) => listed.has(f.file))).toEqual([]);
    const train = fs.readFileSync(path.join(scratch, 'a', 'train.txt'), 'utf8');
    for (const f of testFiles.filter((x) => x.text.length > 2000)) expect(train.includes(f.text)).toBe(false);
  });
});

describe('training pieces (base examples are drawn one a draw: whole files over-drew small ones)', () => {
  test('pieces of about 1.5 KB cut at newlines, joined by the newline they were cut at: the file again', () => {
    const { files } = readTrainFiles(path.join(scratch, 'a'), manifest);
    const sizes: number[] = [];
    for (const f of files) {
      const pieces = piecesOf(f.text);
      expect(pieces.join('\n')).toBe(f.text);
      expect(pieces.length).toBe(Math.max(1, Math.round(f.text.length / 1536)));
      sizes.push(...pieces.map((p) => p.length));
    }
    sizes.sort((a, b) => a - b);
    expect(sizes[Math.floor(sizes.length * 0.1)]).toBeGreaterThan(1000);
    expect(sizes[Math.floor(sizes.length * 0.9)]).toBeLessThan(2100);
    // A draw per example is about a draw per byte: draws' shares and bytes' shares differ by little (whole files: ~0.47).
    const tv = (xs: number[]) => {
      const total = xs.reduce((a, b) => a + b, 0);
      return 0.5 * xs.reduce((d, x) => d + Math.abs(1 / xs.length - x / total), 0);
    };
    expect(tv(sizes)).toBeLessThan(0.06);
    expect(tv(files.map((f) => f.text.length))).toBeGreaterThan(0.3);
    expect(piecesOf('one line, no newline')).toEqual(['one line, no newline']);
    expect(piecesOf(`${'a'.repeat(3000)}\n`)).toEqual([`${'a'.repeat(3000)}\n`]);
  });
});

describe('eval items', () => {
  test('completion items are deterministic, unique and their reference follows the prompt in the file', () => {
    const a = buildCompletionItems('public', publicFiles, { count: 200, seed: 1 });
    const b = buildCompletionItems('public', [...publicFiles].reverse(), { count: 200, seed: 1 });
    expect(a).toEqual(b);
    expect(a).toHaveLength(200);
    expect(new Set(a.map((i) => i.id)).size).toBe(200);
    const texts = new Map(publicFiles.map((f) => [f.file, f.text]));
    for (const item of a) {
      const text = texts.get(item.sourceFile)!;
      const at = text.indexOf(item.prompt + item.reference);
      expect(at).toBeGreaterThanOrEqual(0);
      expect(item.prompt.length).toBeGreaterThanOrEqual(64);
      expect(item.prompt.length).toBeLessThanOrEqual(160);
      expect(firstToken(text.slice(at + item.prompt.length))).toBe(item.reference);
      expect(item.reference.trim()).toBe(item.reference);
      expect(['identifier', 'keyword', 'number', 'operator', 'punct']).toContain(item.category);
      expect(item.grader).toBe('exact_token');
    }
    const c = buildCompletionItems('public', publicFiles, { count: 200, seed: 2 });
    expect(c.map((i) => i.id)).not.toEqual(a.map((i) => i.id));
  });

  test('item ids depend on the split, file and offset, not on the seed', () => {
    const a = buildCompletionItems('public', publicFiles, { count: 300, seed: 1 });
    const b = buildCompletionItems('public', publicFiles, { count: 300, seed: 2 });
    const bById = new Map(b.map((i) => [i.id, i]));
    const shared = a.filter((i) => bById.has(i.id));
    expect(shared.length).toBeGreaterThan(0);
    for (const i of shared) expect(bById.get(i.id)!.reference).toBe(i.reference);
    const other = buildCompletionItems('heldout', publicFiles, { count: 300, seed: 1 });
    expect(other.some((i) => a.some((j) => j.id === i.id))).toBe(false);
  });

  test('loss items are whole chunks of their files, deterministic', () => {
    const a = buildLossItems('public', publicFiles, { count: 40, seed: 1 });
    expect(a).toEqual(buildLossItems('public', publicFiles, { count: 40, seed: 1 }));
    expect(a).toHaveLength(40);
    const texts = new Map(publicFiles.map((f) => [f.file, f.text]));
    for (const item of a) {
      expect(item.prompt).toBe('');
      expect(item.reference).toHaveLength(256);
      expect(texts.get(item.sourceFile)).toContain(item.reference);
      expect(item.grader).toBe('bits_per_byte');
      expect(['typescript', 'javascript']).toContain(item.category);
    }
  });

  test("items spread over a split's files: at the default sizes the held-out items come from 16 files or more", async () => {
    // The gate flips the items of one file as one cluster: a draw that a few large files fill could never be significant.
    const heldout = await evalSplitFiles('heldout');
    expect(heldout.length).toBeGreaterThan(heldoutFiles.length);
    const test = new Set(testFiles.map((f) => f.file));
    expect(heldout.filter((f) => test.has(f.file) || manifest.files.some((m) => m.file === f.file && m.split !== 'heldout'))).toEqual([]);
    const completions = buildCompletionItems('heldout', heldout, { count: 200, seed: 1 });
    const losses = buildLossItems('heldout', heldout, { count: 40, seed: 1 });
    expect(new Set(completions.map((i) => i.sourceFile)).size).toBeGreaterThanOrEqual(16);
    expect(new Set(losses.map((i) => i.sourceFile)).size).toBeGreaterThanOrEqual(16);
    // No file gives more than ⌈2k / files⌉ items.
    for (const [items, k] of [
      [completions, 200],
      [losses, 40],
    ] as const) {
      const per = new Map<string, number>();
      for (const i of items) per.set(i.sourceFile, (per.get(i.sourceFile) ?? 0) + 1);
      expect(Math.max(...per.values())).toBeLessThanOrEqual(Math.ceil((2 * k) / heldout.length));
    }
  });

  test('asking for more items than the split has returns what there is', () => {
    const tiny = [{ file: 'x/a.ts', text: `${'// header\n'.repeat(7)}const a = 1;\n` }];
    const items = buildCompletionItems('public', tiny, { count: 50, seed: 1 });
    expect(items.map((i) => i.reference)).toEqual(['const', 'a', '=', '1', ';']);
    expect(buildLossItems('public', tiny, { count: 5, seed: 1 })).toEqual([]);
  });

  test('references never come from comments or strings', () => {
    const text = `${'x'.repeat(70)}\n// a comment here\nconst s = "in a string";\n/* block\n comment */ call(\`tmpl \${x}\`);\n`;
    const items = buildCompletionItems('public', [{ file: 'x/b.ts', text }], { count: 100, seed: 1 });
    const refs = items.map((i) => i.reference);
    expect(refs).toEqual(expect.arrayContaining(['const', 's', '=', ';', 'call', '(', ')']));
    for (const word of ['comment', 'here', 'in', 'string', 'block', 'tmpl']) expect(refs).not.toContain(word);
    const mask = codeMask('a // b\nc');
    expect(Array.from(mask)).toEqual([1, 1, 0, 0, 0, 0, 1, 1]);
  });
});

describe('firstToken', () => {
  test.each([
    ['foo(bar)', 'foo'],
    ['  \n\tconst x', 'const'],
    ['$scope.x', '$scope'],
    ['_private1 = 2', '_private1'],
    ['42;', '42'],
    ['0x1F)', '0x1F'],
    ['3.14 * r', '3.14'],
    ['1_000n', '1_000n'],
    ['=== b', '==='],
    ['=> {', '=>'],
    ['?.name', '?.'],
    ['...rest', '...'],
    ['(a, b)', '('],
    ['))', ')'],
    ['{ a }', '{'],
    ["'str'", "'"],
    ['`t`', '`'],
    [';\n', ';'],
    ['é', 'é'],
    ['', ''],
    ['   \n ', ''],
  ])('firstToken(%j) is %j', (input, expected) => {
    expect(firstToken(input)).toBe(expected);
  });

  test('classes identifiers, keywords, numbers, operators and punctuation', () => {
    expect(tokenAt('return x')!.cls).toBe('keyword');
    expect(tokenAt('returned')!.cls).toBe('identifier');
    expect(tokenAt('12px')!.cls).toBe('number');
    expect(tokenAt('&&')!.cls).toBe('operator');
    expect(tokenAt(',')!.cls).toBe('punct');
  });
});

describe('search space', () => {
  test('is a valid spec search space whose knobs the trainer accepts', () => {
    expect(searchSpaceSchema.safeParse(BUILTIN_SEARCH_SPACE).success).toBe(true);
    expect(() => resolveTrainParams(BUILTIN_DEFAULT_PARAMS)).not.toThrow();
    for (const [name, def] of Object.entries(BUILTIN_SEARCH_SPACE)) {
      if (def.type === 'categorical') continue;
      expect(() => resolveTrainParams({ [name]: def.low })).not.toThrow();
      expect(() => resolveTrainParams({ [name]: def.high })).not.toThrow();
    }
  });
});
