// Eval suites as versioned data on a real database (validation naming the failing items, versions, content hashes,
// logged held-out reads), and the contamination check that refuses a dataset version before any training run.
import crypto from 'node:crypto';
import { eq } from 'drizzle-orm';
import { checkContamination } from '../../activities/eval/check-contamination';
import { readHeldoutItems, readSealedItems } from '../../activities/eval/heldout-items';
import { itemContentHash, registerEvalSuite } from '../../services/suites/register-suite';
import { MalformedSuiteError } from '../../core/eval-suite/suite-schema';
import { ContaminatedDatasetError } from '../../core/errors';
import type { DbHandle } from '../../db/client';
import { datasets, datasetVersions, evalItems, evalSuites, examples, heldoutReads } from '../../db/schema';
import { freshDatabase, scratchDir } from '../helpers/env';

let h: DbHandle;
const home = scratchDir('evals-suites');
const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
const CANARY = 'FWCANARY-0123456789abcdef0123456789abcdef';
const PUBLIC_PROMPT = 'function clampToRange(value, lowest, highest) {\n  return Math.min(highest, Math.max(lowest, ';
const HELDOUT_PROMPT =
  'export function slugify(title) {\n  return title.toLowerCase().replace(/[^a-z0-9]+/g, "-");\n}\n// slugify("A B") === ';

const suite = (over: Record<string, unknown> = {}) => ({
  name: 'arith',
  rubrics: { explains: 'Give a reason.' },
  canaries: [CANARY],
  items: [
    { id: 'p1', split: 'public', grader: { kind: 'exact_match' }, prompt: PUBLIC_PROMPT, reference: 'value));\n}' },
    { id: 'p2', split: 'public', grader: { kind: 'numeric_tolerance', absolute: 0.01 }, prompt: 'pi to two places', reference: '3.14' },
    { id: 'p3', split: 'public', grader: { kind: 'llm_judge', rubric: 'explains', model: 'judge' }, prompt: 'why?', reference: 'because' },
    { id: 'h1', split: 'heldout', grader: { kind: 'exact_match' }, prompt: HELDOUT_PROMPT, reference: '"a-b"' },
    {
      id: 't1',
      split: 'probe',
      grader: { kind: 'exact_match' },
      prompt: 'function clampToRange(v, lo, hi) {\n  return Math.min(hi, Math.max(lo, ',
      reference: 'v));\n}',
      probe: { kind: 'perturbed', of: 'p1' },
    },
    {
      id: 'x1',
      split: 'probe',
      grader: { kind: 'test_program', tests: 'throw new Error("never")' },
      prompt: 'write f',
      reference: '-',
      probe: { kind: 'cheat_only' },
    },
  ],
  ...over,
});

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('evals_suites'));
});
afterAll(async () => h?.close());

describe('suites as versioned data', () => {
  test('a suite is stored as name@1 with content-hashed items; the same content again is the same version; new content is @2', async () => {
    const first = await registerEvalSuite(h.db, suite());
    expect(first).toEqual({ suiteId: 'arith@1', version: 1, created: true, counts: { public: 3, heldout: 1, probe: 2 } });
    const [held] = await h.db.select().from(evalItems).where(eq(evalItems.id, 'arith@1/h1'));
    expect(held).toMatchObject({ split: 'heldout', grader: 'exact_match', contentHash: itemContentHash(HELDOUT_PROMPT, '"a-b"') });
    const [twin] = await h.db.select().from(evalItems).where(eq(evalItems.id, 'arith@1/t1'));
    expect(twin.probe).toEqual({ kind: 'perturbed', of: 'arith@1/p1' });
    const [row] = await h.db.select().from(evalSuites).where(eq(evalSuites.id, 'arith@1'));
    expect(row.settings).toEqual({ rubrics: { explains: 'Give a reason.' }, canaries: [CANARY], heldoutCanaries: [] });

    expect(await registerEvalSuite(h.db, suite())).toMatchObject({ suiteId: 'arith@1', created: false });
    const items = suite().items.map((i) => (i.id === 'p2' ? { ...i, reference: '3.1416' } : i));
    expect(await registerEvalSuite(h.db, suite({ items }))).toMatchObject({ suiteId: 'arith@2', version: 2, created: true });
  });

  test('a malformed suite is rejected with every failing item named, and nothing is stored', async () => {
    const bad = suite({
      name: 'broken',
      items: [
        { id: 'ok', split: 'public', grader: { kind: 'exact_match' }, prompt: 'a', reference: 'b' },
        { id: 'no-grader', split: 'public', prompt: 'a', reference: 'b' },
        { id: 'bad-tests', split: 'public', grader: { kind: 'test_program', tests: '' }, prompt: 'a', reference: 'b' },
        {
          id: 'orphan-twin',
          split: 'probe',
          grader: { kind: 'exact_match' },
          prompt: 'a',
          reference: 'b',
          probe: { kind: 'perturbed', of: 'missing' },
        },
        { id: 'no-rubric', split: 'public', grader: { kind: 'llm_judge', rubric: 'nope', model: 'm' }, prompt: 'a', reference: 'b' },
        { id: 'ok', split: 'public', grader: { kind: 'exact_match' }, prompt: 'a', reference: 'c' },
      ],
    });
    const err = await registerEvalSuite(h.db, bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MalformedSuiteError);
    const message = (err as Error).message;
    expect(message).toMatch(/^malformed eval suite "broken", 5 failing item\(s\)/);
    for (const named of [
      'items[1] "no-grader": grader',
      'items[2] "bad-tests": grader.tests',
      'item "orphan-twin": a perturbed twin needs',
      'item "no-rubric": rubric "nope"',
      'item "ok": the id is used twice',
    ])
      expect(message).toContain(named);
    expect(await h.db.select().from(evalSuites).where(eq(evalSuites.name, 'broken'))).toEqual([]);
    await expect(registerEvalSuite(h.db, { name: 'Bad Name', items: [] })).rejects.toThrow(
      /name: .*; items: a suite needs at least one item/,
    );
  });

  test('every held-out read is logged with its reader and purpose', async () => {
    const before = (await h.db.select().from(heldoutReads)).length;
    const rows = await readHeldoutItems(h.db, 'arith@1', 'someWorkflow:scoreCheckpoint', 'gate');
    expect(rows.map((r) => r.id)).toEqual(['arith@1/h1']);
    const reads = await h.db.select().from(heldoutReads);
    expect(reads).toHaveLength(before + 1);
    expect(reads.at(-1)).toMatchObject({ suiteId: 'arith@1', reader: 'someWorkflow:scoreCheckpoint', purpose: 'gate' });
  });
});

describe('the contamination check', () => {
  const version = async (id: string, texts: Record<string, string>) => {
    await h.db.insert(datasets).values({ id: 'c/code', campaignId: 'c', name: 'code' }).onConflictDoNothing();
    await h.db.insert(examples).values(
      Object.entries(texts).map(([ref, content]) => ({
        datasetVersionId: id,
        contentHash: sha(content),
        source: 'corpus',
        sourceRef: ref,
        content,
      })),
    );
    await h.db.insert(datasetVersions).values({ id, datasetId: 'c/code', path: `${home}/${id}`, contentHash: sha(id), countsBySource: {} });
  };
  const clean = { 'a.ts': 'export const double = (n) => n * 2;\n', 'b.ts': 'export class Stack { push(x) { this.xs.push(x); } }\n' };

  test("a clean version passes, and the check reads (and logs) every suite's held-out split", async () => {
    await version('c/code@clean', clean);
    const before = (await h.db.select().from(heldoutReads)).length;
    const r = await checkContamination({ db: h.db, home }, { datasetVersionId: 'c/code@clean', reader: 'c/inner/1' });
    expect(r).toMatchObject({ examples: 2, canaries: 2 });
    expect((await h.db.select().from(heldoutReads)).length).toBe(before + 2);
  });

  test('exact copies, near-duplicates and canaries are refused, naming each example and item', async () => {
    await version('c/code@dirty', {
      ...clean,
      'copy.ts': `// util\n${PUBLIC_PROMPT}value));\n}\n`,
      // The held-out item re-indented with one word changed: a near-duplicate, not an exact copy.
      'near.ts': HELDOUT_PROMPT.replace('title', 'name').replace(/\n/g, '\n    ') + '"a-b"',
      'canary.ts': `const marker = "${CANARY}";\n`,
    });
    const err = await checkContamination({ db: h.db, home }, { datasetVersionId: 'c/code@dirty', reader: 'c/inner/2' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContaminatedDatasetError);
    const m = (err as Error).message;
    expect(m).toMatch(
      /^dataset version "c\/code@dirty" is contaminated \(13-character n-grams, share >= 0.5, or a canary\): 3 example\(s\)/,
    );
    expect(m).toContain('corpus:copy.ts contains arith@1/p1 (public)');
    expect(m).toMatch(/corpus:near\.ts shares 0\.\d+ of the 13-grams of arith@1\/h1 \(heldout\)/);
    expect(m).toContain('corpus:canary.ts carries canary arith@1#canary0');
    expect(m).not.toContain(CANARY);
    expect(m).not.toContain('a.ts');
  });
});

describe('held-out canaries of a registered suite', () => {
  // Written into held-out text only, like the built-in task's (a comment shaped like a commit hash).
  const HELD_CANARY = '4d1c9e07b2a85f36e0c7d9a1b4f2e8c05a6d3b79';
  const held = {
    id: 'hc',
    split: 'heldout',
    grader: { kind: 'exact_match' },
    prompt: `// generated from commit ${HELD_CANARY.slice(0, 12)}`,
    reference: HELD_CANARY.slice(12),
  };
  const leaky = (over: Record<string, unknown> = {}) =>
    suite({ name: 'leaky', heldoutCanaries: [HELD_CANARY], items: [...suite().items, held], ...over });

  test('one outside the held-out split, or in no held-out item, is refused', async () => {
    const inPublic = leaky({
      items: [
        ...suite().items,
        held,
        { id: 'p9', split: 'public', grader: { kind: 'exact_match' }, prompt: `id ${HELD_CANARY}`, reference: 'x' },
      ],
    });
    await expect(registerEvalSuite(h.db, inPublic)).rejects.toThrow(/heldoutCanaries\[0\]: "p9" outside the held-out split hold it/);
    await expect(registerEvalSuite(h.db, leaky({ items: suite().items }))).rejects.toThrow(
      /heldoutCanaries\[0\]: no held-out item's text holds it/,
    );
  });

  test('stored with the suite, and a dataset carrying one is refused by name, without printing it', async () => {
    const { suiteId } = await registerEvalSuite(h.db, leaky());
    const [row] = await h.db.select().from(evalSuites).where(eq(evalSuites.id, suiteId));
    expect(row.settings).toMatchObject({ heldoutCanaries: [HELD_CANARY] });
    await h.db.insert(datasets).values({ id: 'c/code', campaignId: 'c', name: 'code' }).onConflictDoNothing();
    const content = `// vendored build\nexport const BUILD = "${HELD_CANARY}";\n`;
    await h.db
      .insert(examples)
      .values({ datasetVersionId: 'c/code@held', contentHash: sha(content), source: 'corpus', sourceRef: 'leak.ts', content });
    await h.db
      .insert(datasetVersions)
      .values({ id: 'c/code@held', datasetId: 'c/code', path: `${home}/held`, contentHash: sha('held'), countsBySource: {} });
    const err = await checkContamination({ db: h.db, home }, { datasetVersionId: 'c/code@held', reader: 'c/inner/3' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContaminatedDatasetError);
    expect((err as Error).message).toContain(`corpus:leak.ts carries canary ${suiteId}#heldout-canary0`);
    expect((err as Error).message).not.toContain(HELD_CANARY);
  });
});

describe('the sealed test split of a registered suite', () => {
  const TEST_PROMPT = 'export function median(xs) {\n  const s = [...xs].sort((a, b) => a - b);\n  const m = s.length >> 1;\n  return ';
  const sealed = () =>
    suite({
      name: 'sealed',
      items: [...suite().items, { id: 's1', split: 'test', grader: { kind: 'exact_match' }, prompt: TEST_PROMPT, reference: 's[m]' }],
    });

  test('test items are read for a report or the contamination check only, each read logged with split test', async () => {
    const { suiteId, counts } = await registerEvalSuite(h.db, sealed());
    expect(counts).toMatchObject({ test: 1, heldout: 1 });
    const reads = () => h.db.select().from(heldoutReads).where(eq(heldoutReads.suiteId, suiteId));
    const rows = await readSealedItems(h.db, suiteId, 'test', 'w:scoreCheckpoint', 'report');
    expect(rows.map((r) => r.id)).toEqual([`${suiteId}/s1`]);
    expect(await reads()).toMatchObject([{ split: 'test', reader: 'w:scoreCheckpoint', purpose: 'report' }]);
    await expect(readSealedItems(h.db, suiteId, 'test', 'w:evaluateGate', 'gate')).rejects.toThrow(
      /the sealed test split is read for reports only, not for "gate"/,
    );
    expect(await reads()).toHaveLength(1); // a refused read reads and logs nothing
  });

  test('a dataset copying a test item is refused like one copying a held-out item, through the logged read', async () => {
    const { suiteId } = await registerEvalSuite(h.db, sealed());
    await h.db.insert(datasets).values({ id: 'c/code', campaignId: 'c', name: 'code' }).onConflictDoNothing();
    const content = `// stats\n${TEST_PROMPT}s[m];\n}\n`;
    await h.db
      .insert(examples)
      .values({ datasetVersionId: 'c/code@test', contentHash: sha(content), source: 'corpus', sourceRef: 'median.ts', content });
    await h.db
      .insert(datasetVersions)
      .values({ id: 'c/code@test', datasetId: 'c/code', path: `${home}/test`, contentHash: sha('test'), countsBySource: {} });
    const err = await checkContamination({ db: h.db, home }, { datasetVersionId: 'c/code@test', reader: 'c/inner/4' }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContaminatedDatasetError);
    expect((err as Error).message).toContain(`corpus:median.ts contains ${suiteId}/s1 (test)`);
    const reads = await h.db.select().from(heldoutReads).where(eq(heldoutReads.reader, 'checkContamination:c/inner/4'));
    expect(reads.filter((r) => r.split === 'test')).toMatchObject([{ suiteId, purpose: 'contamination' }]);
  });
});
