// The outer loop's data step on a real database: feedback → built-in critiques → a new, decontaminated,
// content-addressed dataset version whose train.txt the existing trainer reads.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { buildDatasetVersion } from '../../activities/outer/build-dataset-version';
import { critiqueFeedback } from '../../activities/outer/critique-feedback';
import { datasetDirOf } from '../../services/paths';
import { repetitions, uniformOf } from '../../core/dataset/loss-weights';
import type { DbHandle } from '../../db/client';
import { critiques, datasetVersions, datasets, evalItems, examples, feedbackEvents, trainPairs } from '../../db/schema';
import { freshDatabase, scratchDir } from '../helpers/env';

const home = scratchDir('dataset-version');
let h: DbHandle;
const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

const PARENT = 'c1/code@base-test';
const publicItem = {
  prompt: 'export function clamp(x: number, lo: number, hi: number): number {\n  return Math.min(hi, Math.max(',
  reference: 'lo',
};
const heldoutItem = {
  prompt: '',
  reference: 'function slugify(s: string): string {\n  return s.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");\n}\n',
};
const canary = 'FLYWHEEL-CANARY 5e0c1b7a-93f2-4d0e-a8c4-61b2f9d3e7aa';
const corpus = [
  { ref: 'src/a.ts', text: 'export const a = (n: number) => n * 2;\n' },
  { ref: 'src/b.ts', text: 'export class Stack<T> {\n  private xs: T[] = [];\n  push(x: T) { this.xs.push(x); }\n}\n' },
  // Copies the public item verbatim: must not survive into the child.
  { ref: 'src/leak.ts', text: `// util\n${publicItem.prompt}${publicItem.reference}, x));\n}\n` },
];

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('dataset_version'));
  const { db } = h;
  const dir = datasetDirOf(home, PARENT);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'train.txt'), corpus.map((c) => c.text).join('\n'));
  await db.insert(datasets).values({ id: 'c1/code', campaignId: 'c1', name: 'code' });
  await db
    .insert(examples)
    .values(
      corpus.map((c) => ({ datasetVersionId: PARENT, contentHash: sha(c.text), source: 'corpus', sourceRef: c.ref, content: c.text })),
    );
  await db.insert(datasetVersions).values({ id: PARENT, datasetId: 'c1/code', path: dir, contentHash: 'x', countsBySource: { corpus: 3 } });
  const items = [
    { id: 's@1/pub-1', split: 'public', grader: 'exact_token', ...publicItem },
    { id: 's@1/held-1', split: 'heldout', grader: 'bits_per_byte', ...heldoutItem },
    { id: 's@1/canary', split: 'probe', grader: 'exact_token', prompt: '', reference: canary },
  ];
  await db
    .insert(evalItems)
    .values(items.map((i) => ({ ...i, suiteId: 's@1', contentHash: sha(i.prompt + i.reference), sourceFile: 'f' })));
  const ev = (id: string, kind: string, over: Partial<typeof feedbackEvents.$inferInsert> = {}) => ({
    id,
    campaignId: 'c1',
    kind,
    modelVersion: 'm1',
    prompt: 'function sum(xs: number[]) {\n',
    output: '  return 0;\n}',
    ...over,
  });
  await db.insert(feedbackEvents).values([
    ev('e-edit', 'edit', { correction: '  return xs.reduce((a, b) => a + b, 0);\n}' }),
    // The user's correction reproduces a held-out item: the critique is kept, its example is not.
    ev('e-leak', 'edit', { prompt: '', output: 'function slugify(s) {}', correction: heldoutItem.reference }),
    ev('e-reject', 'reject', { comment: 'wrong language' }),
    ev('e-low', 'rating', { rating: 1 }),
    ev('e-accept', 'accept'),
    ev('other-campaign', 'edit', { campaignId: 'c2', correction: 'x' }),
  ]);
});
afterAll(async () => {
  await h?.close();
});

const count = async (table: typeof examples | typeof datasetVersions | typeof critiques) =>
  (await h.db.select({ n: sql<number>`count(*)::int` }).from(table))[0].n;

let critiqueIds: string[];

test('critiques: one row per failure, linked to its event; rejects carry a "none" signal; a retry writes nothing', async () => {
  const input = { campaignId: 'c1', eventIds: ['e-edit', 'e-leak', 'e-reject', 'e-low', 'e-accept', 'other-campaign', 'nope'] };
  const first = await critiqueFeedback(h.db, input);
  critiqueIds = first.critiqueIds;
  expect(critiqueIds).toEqual(['c1/critique/e-edit', 'c1/critique/e-leak', 'c1/critique/e-reject', 'c1/critique/e-low']);
  expect(first.counts).toEqual({ created: 4, withExample: 2, noSignal: 2, skipped: 1, missing: 2 });

  const [edit] = await h.db.select().from(critiques).where(eq(critiques.id, 'c1/critique/e-edit'));
  expect(edit).toMatchObject({
    campaignId: 'c1',
    sourceKind: 'feedback',
    sourceId: 'e-edit',
    teacher: 'builtin',
    promptVersion: 'builtin-diff-v1',
  });
  expect(edit.text).toMatch(/^Derived mechanically by the built-in teacher \(no model\)\./);
  expect(edit.text).toContain('expected "xs", produced "0"');
  expect(edit.signal.map((s) => s.kind)).toEqual(['sft', 'pair']);
  const [reject] = await h.db.select().from(critiques).where(eq(critiques.id, 'c1/critique/e-reject'));
  expect(reject.text).toContain('The user commented: "wrong language"');
  expect(reject.signal).toEqual([{ kind: 'none', why: expect.stringContaining('no reference') }]);

  const again = await critiqueFeedback(h.db, input);
  expect(again).toEqual({ ...first, counts: { ...first.counts, created: 0 } });
  expect(await count(critiques)).toBe(4);
});

test('a version: parent plus critique examples, minus eval overlaps (listed); content-addressed and built once', async () => {
  const deps = { db: h.db, home };
  const input = { campaignId: 'c1', parentVersionId: PARENT, critiqueIds, mix: { critique: 2 }, lossWeights: { code: 1.5 } };
  const r = await buildDatasetVersion(deps, input);
  expect(r.versionId).toMatch(/^c1\/code@[0-9a-f]{12}$/);
  expect(r.created).toBe(true);
  expect(r.removed).toEqual(
    expect.arrayContaining([
      { sourceRef: 'src/leak.ts', evalItemIds: ['s@1/pub-1'] },
      { sourceRef: 'c1/critique/e-leak', evalItemIds: ['s@1/held-1'] },
    ]),
  );
  expect(r.removed).toHaveLength(2);
  expect(r.counts).toMatchObject({
    examples: 3,
    bySource: { corpus: 2, critique: 1 },
    added: 1,
    duplicates: 0,
    removed: 2,
    droppedEvents: 1, // e-leak, on its raw correction, before any example was built from it
    skippedSignals: { pair: 2, none: 2 },
  });

  const [v] = await h.db.select().from(datasetVersions).where(eq(datasetVersions.id, r.versionId));
  expect(v).toMatchObject({
    datasetId: 'c1/code',
    parentIds: [PARENT],
    countsBySource: { corpus: 2, critique: 1 },
    mixWeights: { corpus: 1, critique: 2 },
    lossWeights: { code: 1.5 },
  });
  const train = fs.readFileSync(path.join(v.path, 'train.txt'), 'utf8');
  expect(v.contentHash).toBe(sha(train));
  expect(r.counts.trainBytes).toBe(Buffer.byteLength(train));
  expect(JSON.parse(fs.readFileSync(path.join(v.path, 'version.json'), 'utf8'))).toMatchObject({
    versionId: r.versionId,
    parentIds: [PARENT],
    contentHash: v.contentHash,
  });

  const added = 'function sum(xs: number[]) {\n  return xs.reduce((a, b) => a + b, 0);\n}';
  // Copies: mix × example weight × loss weight of its category, resampled by the example's own hash.
  const copies = (text: string, m: number) => expect(train.split(text).length - 1).toBe(repetitions(m, uniformOf(sha(text))));
  const [critiqueRow] = await h.db
    .select()
    .from(examples)
    .where(and(eq(examples.datasetVersionId, r.versionId), eq(examples.source, 'critique')));
  copies(added, 2 * critiqueRow.weight * 1.5);
  for (const c of corpus.slice(0, 2)) copies(c.text, 1.5);
  expect(train).toContain(corpus[0].text);
  expect(train).toContain(corpus[1].text);
  for (const text of [publicItem.prompt + publicItem.reference, heldoutItem.reference, canary]) expect(train).not.toContain(text);
  expect(fs.readdirSync(v.path).filter((f) => f.endsWith('.tmp'))).toEqual([]);

  const rows = await h.db.select().from(examples).where(eq(examples.datasetVersionId, r.versionId));
  expect(rows.map((e) => e.sourceRef).sort()).toEqual(['c1/critique/e-edit', 'src/a.ts', 'src/b.ts']);
  expect(rows.find((e) => e.source === 'critique')).toMatchObject({ content: added, category: 'code' });

  const [versionsBefore, examplesBefore] = [await count(datasetVersions), await count(examples)];
  const again = await buildDatasetVersion(deps, { ...input, critiqueIds: [...critiqueIds].reverse(), mix: { critique: 2 } });
  expect(again).toEqual({ ...r, created: false });
  expect([await count(datasetVersions), await count(examples)]).toEqual([versionsBefore, examplesBefore]);

  // Other weights are other inputs: another version, with the same examples.
  const other = await buildDatasetVersion(deps, { ...input, mix: { critique: 1 } });
  expect(other.versionId).not.toBe(r.versionId);
  expect(other.created).toBe(true);
});

test('an event that overlaps an eval item on its raw fields yields no signal of any builder, and its drop is recorded', async () => {
  const deps = { db: h.db, home };
  const signals = ['reference', 'critique', 'pairs'] as const;
  const r = await buildDatasetVersion(deps, { campaignId: 'c1', parentVersionId: PARENT, critiqueIds, signals });
  expect(r.counts.droppedEvents).toBe(1);
  expect(r.removed).toContainEqual({ sourceRef: 'c1/critique/e-leak', evalItemIds: ['s@1/held-1'] });
  // Its critic example (the output JSON-escaped in an instruction, the critique's token lists) passes the check on
  // built text; it is left out all the same, as are its reference example and its pair.
  const rows = await h.db.select().from(examples).where(eq(examples.datasetVersionId, r.versionId));
  expect(rows.filter((e) => e.sourceRef === 'c1/critique/e-leak')).toEqual([]);
  expect(rows.filter((e) => e.sourceRef === 'c1/critique/e-edit').map((e) => e.builder)).toEqual(
    expect.arrayContaining(['reference', 'critique']),
  );
  const pairs = await h.db.select().from(trainPairs).where(eq(trainPairs.datasetVersionId, r.versionId));
  expect(pairs.map((p) => p.sourceRef)).toEqual(['c1/critique/e-edit']);
});

test('source shares: the version records the mix weights that give the named source its share of what training draws', async () => {
  const deps = { db: h.db, home };
  const r = await buildDatasetVersion(deps, {
    campaignId: 'c1',
    parentVersionId: PARENT,
    critiqueIds,
    mix: { critique: 2 },
    shares: { corpus: 0.8 },
  });
  const [v] = await h.db.select().from(datasetVersions).where(eq(datasetVersions.id, r.versionId));
  const rows = await h.db.select().from(examples).where(eq(examples.datasetVersionId, r.versionId));
  const drawn = (source: string) =>
    rows.filter((e) => e.source === source).reduce((a, e) => a + v.mixWeights[e.source] * e.weight * (v.lossWeights[e.category] ?? 1), 0);
  expect(drawn('corpus') / (drawn('corpus') + drawn('critique'))).toBeCloseTo(0.8, 4);
  // train.jsonl's effective weights are the same figures.
  const lines = fs
    .readFileSync(path.join(v.path, 'train.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { source: string; weight: number });
  const inFile = (source: string) => lines.filter((l) => l.source === source).reduce((a, l) => a + l.weight, 0);
  expect(inFile('corpus') / (inFile('corpus') + inFile('critique'))).toBeCloseTo(0.8, 4);
});

test('a child of the child keeps its weights and stays clean; unknown ids are NotFoundErrors', async () => {
  const deps = { db: h.db, home };
  const first = await buildDatasetVersion(deps, { campaignId: 'c1', parentVersionId: PARENT, critiqueIds, mix: { critique: 2 } });
  const child = await buildDatasetVersion(deps, { campaignId: 'c1', parentVersionId: first.versionId, critiqueIds: [] });
  expect(child).toMatchObject({ created: true, removed: [], counts: { examples: 3, added: 0 } });
  const [v] = await h.db.select().from(datasetVersions).where(eq(datasetVersions.id, child.versionId));
  expect(v).toMatchObject({ parentIds: [first.versionId], mixWeights: { corpus: 1, critique: 2 } });

  // Re-adding a critique whose example the parent already holds is a duplicate, not a second copy.
  const dup = await buildDatasetVersion(deps, { campaignId: 'c1', parentVersionId: first.versionId, critiqueIds: ['c1/critique/e-edit'] });
  expect(dup).toMatchObject({ versionId: child.versionId, created: false, counts: { duplicates: 1, added: 0 } });

  await expect(buildDatasetVersion(deps, { campaignId: 'c1', parentVersionId: 'c1/code@nope', critiqueIds: [] })).rejects.toMatchObject({
    name: 'NotFoundError',
  });
  await expect(buildDatasetVersion(deps, { campaignId: 'c2', parentVersionId: PARENT, critiqueIds })).rejects.toMatchObject({
    name: 'NotFoundError',
  });
  await expect(
    buildDatasetVersion(deps, { campaignId: 'c1', parentVersionId: PARENT, critiqueIds, mix: { corpus: -1 } }),
  ).rejects.toMatchObject({ name: 'InvalidWeightsError' });
});
