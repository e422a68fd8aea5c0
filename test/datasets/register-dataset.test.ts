// `registerDataset` (flywheel dataset add) on a real PostgreSQL: both line shapes, content-addressed versions,
// duplicates collapsing, a malformed file refused whole with every problem's location, the version's files, a file of
// 50,000 lines, concurrent registrations, and a campaign's derived version of a registered dataset.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { buildDatasetVersion } from '../../activities/outer/build-dataset-version';
import { MAX_EXAMPLE_LINE_BYTES } from '../../core/dataset/example-line';
import { repetitions, uniformOf } from '../../core/dataset/loss-weights';
import type { DbHandle } from '../../db/client';
import { critiques, datasets, datasetVersions, examples } from '../../db/schema';
import { MalformedDatasetError, registerDataset } from '../../services/datasets/register-dataset';
import { datasetDirOf } from '../../services/paths';
import { datasetVersionsOf } from '../../services/queries/datasets';
import { freshDatabase, scratchDir } from '../helpers/env';

const home = scratchDir('register-dataset');
const files = scratchDir('register-dataset-files');
let h: DbHandle;
const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('register_dataset'));
});
afterAll(async () => {
  await h?.close();
});

function writeFile(name: string, lines: string[]): string {
  const file = path.join(files, name);
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const count = async (table: typeof examples | typeof datasetVersions | typeof datasets) =>
  (await h.db.select({ n: sql<number>`count(*)::int` }).from(table))[0].n;

const LINES = [
  JSON.stringify({ prompt: 'Q: 2+2=', completion: '4', category: 'add' }),
  JSON.stringify({
    messages: [
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris' },
    ],
    category: 'geo',
  }),
  '',
  JSON.stringify({ prompt: 'Q: 3+5=', completion: '8', category: 'add', weight: 2 }),
  // The same text as the first line (other category and weight): a duplicate, the first line wins.
  JSON.stringify({ prompt: 'Q: 2+2', completion: '=4', category: 'other', weight: 3 }),
  JSON.stringify({ completion: 'tab\tquote" backslash\\ newline\n"end"', prompt: 'escapes: ', weight: 0.5 }),
];

test('a file of both line shapes registers: counts, rows, train.jsonl, train.txt and version.json', async () => {
  const file = writeFile('good.jsonl', LINES);
  const r = await registerDataset(h.db, 'qa', file, { home });
  expect(r.versionId).toMatch(/^qa@[0-9a-f]{12}$/);
  expect(r).toMatchObject({ created: true, examples: 4, duplicates: 1, byCategory: { add: 2, geo: 1, general: 1 } });

  const [d] = await h.db.select().from(datasets).where(eq(datasets.id, 'qa'));
  expect(d).toMatchObject({ name: 'qa', campaignId: null });
  const [v] = await h.db.select().from(datasetVersions).where(eq(datasetVersions.id, r.versionId));
  expect(v).toMatchObject({ datasetId: 'qa', parentIds: [], countsBySource: { user: 4 }, path: datasetDirOf(home, r.versionId) });
  expect(r.versionId.split('@')[1]).toBe(v.contentHash.slice(0, 12));

  const rows = await h.db.select().from(examples).where(eq(examples.datasetVersionId, r.versionId));
  expect(rows).toHaveLength(4);
  const byRef = Object.fromEntries(rows.map((e) => [e.sourceRef, e]));
  expect(byRef['good.jsonl:1']).toMatchObject({
    source: 'user',
    prompt: 'Q: 2+2=',
    completion: '4',
    content: 'Q: 2+2=4',
    category: 'add',
    weight: 1,
  });
  expect(byRef['good.jsonl:1'].contentHash).toBe(sha('Q: 2+2=4'));
  expect(byRef['good.jsonl:2']).toMatchObject({
    prompt: null,
    completion: null,
    messages: [
      { role: 'user', content: 'Capital of France?' },
      { role: 'assistant', content: 'Paris' },
    ],
    content: 'user: Capital of France?\nassistant: Paris',
    category: 'geo',
  });
  expect(byRef['good.jsonl:4']).toMatchObject({ weight: 2 });
  expect(byRef['good.jsonl:5']).toBeUndefined();
  expect(byRef['good.jsonl:6']).toMatchObject({ completion: 'tab\tquote" backslash\\ newline\n"end"', weight: 0.5, category: 'general' });

  // train.jsonl: one example a line, in file order, canonical keys, source and effective weight.
  const jsonl = fs.readFileSync(path.join(v.path, 'train.jsonl'), 'utf8').split('\n');
  expect(jsonl.pop()).toBe('');
  expect(jsonl.map((l) => JSON.parse(l) as unknown)).toEqual([
    { prompt: 'Q: 2+2=', completion: '4', category: 'add', weight: 1, source: 'user' },
    {
      messages: [
        { role: 'user', content: 'Capital of France?' },
        { role: 'assistant', content: 'Paris' },
      ],
      category: 'geo',
      weight: 1,
      source: 'user',
    },
    { prompt: 'Q: 3+5=', completion: '8', category: 'add', weight: 2, source: 'user' },
    { prompt: 'escapes: ', completion: 'tab\tquote" backslash\\ newline\n"end"', category: 'general', weight: 0.5, source: 'user' },
  ]);
  expect(jsonl[0]).toBe('{"prompt":"Q: 2+2=","completion":"4","category":"add","weight":1,"source":"user"}');

  // train.txt: prompt + completion, repeated by weight, joined by "\n".
  const escaped = 'escapes: tab\tquote" backslash\\ newline\n"end"';
  const pieces = ['Q: 2+2=4', 'user: Capital of France?\nassistant: Paris', 'Q: 3+5=8', 'Q: 3+5=8'];
  for (let k = repetitions(0.5, uniformOf(sha(escaped))); k > 0; k--) pieces.push(escaped);
  const train = fs.readFileSync(path.join(v.path, 'train.txt'), 'utf8');
  expect(train).toBe(pieces.join('\n'));
  expect(JSON.parse(fs.readFileSync(path.join(v.path, 'version.json'), 'utf8'))).toMatchObject({
    versionId: r.versionId,
    parentIds: [],
    contentHash: v.contentHash,
    countsBySource: { user: 4 },
    trainBytes: Buffer.byteLength(train),
    trainSha256: sha(train),
  });
  expect(fs.readdirSync(v.path).sort()).toEqual(['train.jsonl', 'train.txt', 'version.json']);
});

test('content-addressed: the same content is the same version (nothing written); a changed line is another', async () => {
  const before = [await count(datasets), await count(datasetVersions), await count(examples)];
  // Other file name, CRLF line ends, keys in another order, defaults spelt out: the same examples.
  const same = LINES.map((l) => (l ? JSON.stringify({ category: 'general', weight: 1, ...(JSON.parse(l) as object) }) : l));
  const file = path.join(files, 'same.jsonl');
  fs.writeFileSync(file, same.join('\r\n'));
  const first = await registerDataset(h.db, 'qa', writeFile('good.jsonl', LINES), { home });
  const again = await registerDataset(h.db, 'qa', file, { home });
  expect(again).toEqual({ ...first, created: false });
  expect(first.created).toBe(false);
  expect([await count(datasets), await count(datasetVersions), await count(examples)]).toEqual(before);

  const changed = [...LINES];
  changed[0] = JSON.stringify({ prompt: 'Q: 2+2=', completion: '5', category: 'add' });
  const other = await registerDataset(h.db, 'qa', writeFile('changed.jsonl', changed), { home });
  expect(other.versionId).not.toBe(first.versionId);
  // Line 5 no longer repeats line 1's text: five examples, no duplicate.
  expect(other).toMatchObject({ created: true, examples: 5, duplicates: 0 });
  expect(await count(datasets)).toBe(before[0]);
  expect(await count(datasetVersions)).toBe(before[1] + 1);
});

test('a malformed file is refused whole: every problem as FILE:LINE: field: problem, zero rows, no folder', async () => {
  const tables = async () => [await count(datasets), await count(datasetVersions), await count(examples)];
  const before = await tables();
  const folders = () => (fs.existsSync(path.join(home, 'datasets')) ? fs.readdirSync(path.join(home, 'datasets')).sort() : []);
  const dirsBefore = folders();
  const file = writeFile('bad.jsonl', [
    JSON.stringify({ prompt: 'ok', completion: 'fine' }),
    '{"prompt": "unterminated',
    JSON.stringify({ prompt: 'ok', completion: 'fine too' }),
    JSON.stringify({ prompt: 'no completion' }),
    JSON.stringify({ prompt: 'p', completion: 'c', weight: 'heavy' }),
    JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    JSON.stringify({ prompt: 'p', completion: 'c\u0000' }),
    JSON.stringify([1, 2]),
  ]);
  const err = await registerDataset(h.db, 'broken', file, { home }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(MalformedDatasetError);
  const problems = (err as MalformedDatasetError).problems;
  expect(problems).toEqual([
    expect.stringMatching(new RegExp(`^${file}:2: \\(line\\): not valid JSON: `)),
    `${file}:4: completion: Invalid input: expected string, received undefined`,
    `${file}:5: weight: Invalid input: expected number, received string`,
    `${file}:6: messages: the last message must be the assistant's (the loss is on it)`,
    `${file}:7: completion: must not contain NUL (\\u0000) or unpaired surrogate characters`,
    `${file}:8: (line): must be a JSON object`,
  ]);
  expect((err as Error).message.split('\n')[0]).toBe(`${file}: 6 problems, nothing registered`);
  expect((err as MalformedDatasetError).name).toBe('MalformedDatasetError');
  expect(await tables()).toEqual(before);
  expect(folders()).toEqual(dirsBefore);
  const [d] = await h.db.select().from(datasets).where(eq(datasets.id, 'broken'));
  expect(d).toBeUndefined();
});

test('problems are listed up to a cap; a line over the byte limit and an empty file are refused; names are checked', async () => {
  const many = writeFile(
    'many.jsonl',
    Array.from({ length: 45 }, (_, i) => JSON.stringify({ prompt: `p${i}` })),
  );
  const err = (await registerDataset(h.db, 'many', many, { home }).catch((e: unknown) => e)) as MalformedDatasetError;
  expect(err.problems).toHaveLength(20);
  expect(err.total).toBe(45);
  expect(err.message.split('\n').pop()).toBe('... and 25 more');

  const long = writeFile('long.jsonl', [
    JSON.stringify({ prompt: 'p', completion: 'c' }),
    JSON.stringify({ prompt: 'x'.repeat(MAX_EXAMPLE_LINE_BYTES), completion: 'c' }),
  ]);
  await expect(registerDataset(h.db, 'long', long, { home })).rejects.toMatchObject({
    problems: [`${long}:2: (line): longer than ${MAX_EXAMPLE_LINE_BYTES} bytes`],
  });
  const empty = writeFile('empty.jsonl', ['', '  ']);
  await expect(registerDataset(h.db, 'empty', empty, { home })).rejects.toMatchObject({ name: 'MalformedDatasetError' });
  await expect(registerDataset(h.db, 'Bad/Name', long, { home })).rejects.toMatchObject({ name: 'UsageError' });
  await expect(registerDataset(h.db, 'nofile', path.join(files, 'missing.jsonl'), { home })).rejects.toMatchObject({ name: 'UsageError' });
  const [d] = await h.db.select().from(datasets).where(eq(datasets.id, 'long'));
  expect(d).toBeUndefined();
});

test('a line that is not UTF-8 is refused with its line and the byte offset in the file, not read as U+FFFD', async () => {
  const first = JSON.stringify({ prompt: 'fine', completion: 'ok' }) + '\r\n';
  const head = '{"prompt": "caf';
  const file = path.join(files, 'latin1.jsonl');
  // Line 2 says "café" in Latin-1: 0xE9 alone is not UTF-8.
  fs.writeFileSync(file, Buffer.concat([Buffer.from(first + head), Buffer.from([0xe9]), Buffer.from('", "completion": "x"}\n')]));
  await expect(registerDataset(h.db, 'latin', file, { home })).rejects.toMatchObject({
    problems: [`${file}:2: (line): not valid UTF-8 at byte offset ${Buffer.byteLength(first + head)}`],
  });
});

test('a file changed between the two passes: nothing is kept, the connection is not reused broken', async () => {
  const before = [await count(datasets), await count(datasetVersions), await count(examples)];
  const lines = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ prompt: `${i}`, completion: 'x' }));
  for (const [label, change] of [
    ['a bad line', (l: string[]) => [...l.slice(0, 4000), 'oops', ...l.slice(4001)]],
    ['another example', (l: string[]) => [...l.slice(0, 4999), JSON.stringify({ prompt: 'other', completion: 'y' })]],
  ] as const) {
    const file = writeFile(`moving-${label.replace(/ /g, '-')}.jsonl`, lines);
    let changed = false;
    const onProgress = (p: { phase: string; bytes: number; totalBytes: number }) => {
      // The end of pass 1: the file is rewritten before pass 2 reads it.
      if (p.phase === 'check' && p.bytes === p.totalBytes && !changed) {
        changed = true;
        writeFile(path.basename(file), change(lines));
      }
    };
    await expect(registerDataset(h.db, 'moving', file, { home, onProgress })).rejects.toMatchObject({ name: 'FileChangedError' });
    expect(changed).toBe(true);
  }
  expect([await count(datasets), await count(datasetVersions), await count(examples)]).toEqual(before);
  expect(fs.readdirSync(path.join(home, 'datasets')).filter((d) => d.startsWith('moving'))).toEqual([]);
  // The pool still works.
  expect((await registerDataset(h.db, 'moving', writeFile('moving-ok.jsonl', lines), { home })).created).toBe(true);
});

test('50,000 lines stream in, with progress; two registrations of the same content at once both succeed', async () => {
  const cats = ['carry', 'no-carry', 'long'];
  const file = writeFile(
    'big.jsonl',
    Array.from({ length: 50_000 }, (_, i) =>
      JSON.stringify({ prompt: `${i} + ${i * 7} = `, completion: String(i * 8), category: cats[i % 3] }),
    ),
  );
  const seen: string[] = [];
  const [a, b] = await Promise.all([
    registerDataset(h.db, 'big', file, { home, onProgress: (p) => seen.push(p.phase) }),
    registerDataset(h.db, 'big', file, { home }),
  ]);
  expect(a.versionId).toBe(b.versionId);
  expect([a.created, b.created].sort()).toEqual([false, true]);
  expect(a).toMatchObject({ examples: 50_000, duplicates: 0, byCategory: { carry: 16_667, 'no-carry': 16_667, long: 16_666 } });
  expect(b).toMatchObject({ examples: 50_000, byCategory: a.byCategory });
  expect(seen).toContain('check');
  const [{ n }] = await h.db
    .select({ n: sql<number>`count(*)::int` })
    .from(examples)
    .where(eq(examples.datasetVersionId, a.versionId));
  expect(n).toBe(50_000);
  const jsonl = fs
    .readFileSync(path.join(datasetDirOf(home, a.versionId), 'train.jsonl'), 'utf8')
    .trimEnd()
    .split('\n');
  expect(jsonl).toHaveLength(50_000);
  expect(JSON.parse(jsonl[49_999])).toEqual({
    prompt: '49999 + 349993 = ',
    completion: '399992',
    category: 'no-carry',
    weight: 1,
    source: 'user',
  });
});

test("a campaign's version derived from a registered one: dataset <campaign>/<NAME> (the campaign's), parent, critique examples", async () => {
  const base = await registerDataset(h.db, 'qa', writeFile('good.jsonl', LINES), { home });
  await h.db.insert(critiques).values({
    id: 'c9/critique/e1',
    campaignId: 'c9',
    sourceKind: 'feedback',
    sourceId: 'e1',
    teacher: 'builtin',
    promptVersion: 'v1',
    text: 't',
    signal: [{ kind: 'sft', prompt: 'Q: 9+9=', target: '18', weight: 1.5, category: 'add' }],
  });
  const child = await buildDatasetVersion(
    { db: h.db, home },
    { campaignId: 'c9', parentVersionId: base.versionId, critiqueIds: ['c9/critique/e1'] },
  );
  expect(child.versionId).toMatch(/^c9\/qa@[0-9a-f]{12}$/);
  expect(child.counts).toMatchObject({ examples: 5, added: 1, bySource: { user: 4, critique: 1 } });
  const [d] = await h.db.select().from(datasets).where(eq(datasets.id, 'c9/qa'));
  expect(d).toMatchObject({ campaignId: 'c9', name: 'qa' });
  const listed = await datasetVersionsOf(h.db, 'c9');
  expect(listed.map((v) => [v.id, v.dataset, v.parent_ids])).toEqual([[child.versionId, 'qa', [base.versionId]]]);

  const [row] = await h.db.select().from(examples).where(eq(examples.sourceRef, 'c9/critique/e1'));
  expect(row).toMatchObject({ prompt: 'Q: 9+9=', completion: '18', content: 'Q: 9+9=18', category: 'add' });
  const dir = datasetDirOf(home, child.versionId);
  const lines = fs
    .readFileSync(path.join(dir, 'train.jsonl'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { source: string; prompt?: string; messages?: unknown; weight: number });
  expect(lines.filter((l) => l.source === 'user')).toHaveLength(4);
  expect(lines).toContainEqual({ prompt: 'Q: 9+9=', completion: '18', category: 'add', weight: 1.5, source: 'critique' });
  expect(lines).toContainEqual(expect.objectContaining({ messages: expect.any(Array), category: 'geo', source: 'user' }));
  const train = fs.readFileSync(path.join(dir, 'train.txt'), 'utf8');
  expect(train).toContain('user: Capital of France?\nassistant: Paris');
  expect(child.counts.trainBytes).toBe(Buffer.byteLength(train));

  // Built again: the same version, nothing written.
  const again = await buildDatasetVersion(
    { db: h.db, home },
    { campaignId: 'c9', parentVersionId: base.versionId, critiqueIds: ['c9/critique/e1'] },
  );
  expect(again).toEqual({ ...child, created: false });
});
