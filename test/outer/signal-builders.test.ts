// The signal builders on a real database, from recorded feedback, critiques written by the arithmetic task's teacher,
// and revisions answered by a real production checkpoint of the built-in trainer through its sandboxed `predict`:
// each builder yields the examples (or pairs) it promises, with lineage to the event, the critique and the builder;
// a revision that does not verify yields nothing at all; `[]` yields the parent's examples only.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { buildDatasetVersion } from '../../activities/outer/build-dataset-version';
import { critiqueEvalFailures } from '../../activities/outer/critique-eval-failures';
import { critiqueFeedback } from '../../activities/outer/critique-feedback';
import { checkContamination } from '../../activities/eval/check-contamination';
import { critiqueIterationFeedback } from '../../activities/outer/critique-iteration';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { checkpointLineage } from '../../services/lineage';
import { datasetDirOf } from '../../services/paths';
import { TRAIN_EXAMPLES_FILE, TRAIN_PAIRS_FILE, type SignalBuilder, type TrainPair } from '../../core/dataset/example-line';
import { critiquePromptOf } from '../../core/teacher/signal-prompts';
import { ARITHMETIC_TEACHER, arithmeticTeacher } from '../../tasks/arithmetic/teacher';
import type { DbHandle } from '../../db/client';
import {
  critiques,
  datasets,
  datasetVersions,
  evalItems,
  examples,
  experiments,
  feedbackEvents,
  revisions,
  trainPairs,
} from '../../db/schema';
import { trainCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { fastBuiltinSpec } from '../helpers/specs';

const home = scratchDir('signal-builders');
const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
const C = 'sig';
const ITER = `${C}/outer/i1`;
const PARENT = `${C}/sums@base`;
const EXP = `${C}/outer/i0/inner/e0`;
const CKPT = `${EXP}/r1/step-400`;
/** What the production model learnt: two sums, each answer fixed by the 4 bytes before it (its context). */
const TRAINED = '12+34=046\n21+43=064\n';
let h: DbHandle;
let campaignVersionId: string;

/**
 * The recorded feedback. The checkpoint answers 12+34 and 21+43 right when asked again (its revisions verify) and
 * can never write 198 (it never saw a 9 or an 8 as a target), so both 99+99 revisions fail the task's verifier.
 */
const EVENTS = {
  edit: { id: 'e-edit', kind: 'edit', prompt: '12+34=', output: '036\n', correction: '046\n' },
  reject: { id: 'e-reject', kind: 'reject', prompt: '21+43=', output: '054\n', comment: '21+43 is 64' },
  rejectHard: { id: 'e-reject-hard', kind: 'reject', prompt: '99+99=', output: '088\n' },
  editHard: { id: 'e-edit-hard', kind: 'edit', prompt: '99+99=', output: '188\n', correction: '198\n' },
} as const;
const critiqueOf = (e: { id: string }) => `${C}/critique/${e.id}`;

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('signal_builders'));
  const { db } = h;
  ({ versionId: campaignVersionId } = await registerCampaignVersion(
    db,
    fastBuiltinSpec(C, { outerLoop: { signals: ['reference', 'revision', 'critique', 'pairs'], teacher: { task: 'arithmetic' } } }),
  ));
  const dir = datasetDirOf(home, PARENT);
  fs.mkdirSync(dir, { recursive: true });
  const base = ['10+10=020\n', '11+11=022\n'];
  fs.writeFileSync(path.join(dir, 'train.txt'), base.join('\n'));
  await db.insert(datasets).values({ id: `${C}/sums`, campaignId: C, name: 'sums' });
  await db.insert(examples).values(
    base.map((t, k) => ({
      datasetVersionId: PARENT,
      contentHash: sha(t),
      source: 'corpus',
      sourceRef: `base-${k}`,
      content: t,
      prompt: t.slice(0, 6),
      completion: t.slice(6),
      category: 'no-carry',
    })),
  );
  await db
    .insert(datasetVersions)
    .values({ id: PARENT, datasetId: `${C}/sums`, path: dir, contentHash: 'base', countsBySource: { corpus: 2 } });
  await db.insert(feedbackEvents).values(Object.values(EVENTS).map((e) => ({ ...e, campaignId: C, modelVersion: CKPT, ingestedBy: ITER })));

  await db.insert(experiments).values({
    id: EXP,
    campaignId: C,
    campaignVersionId,
    innerLoopId: `${C}/outer/i0/inner`,
    index: 0,
    datasetVersionId: PARENT,
    params: {},
    proposer: 'test',
    status: 'succeeded',
  });
  await trainCheckpoint({ dir: path.join(home, 'ckpt'), id: CKPT, text: TRAINED.repeat(40), seed: 3, steps: 400, db, experimentId: EXP });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const build = (signals: SignalBuilder[]) =>
  buildDatasetVersion(
    { db: h.db, home },
    {
      campaignId: C,
      parentVersionId: PARENT,
      critiqueIds: Object.values(EVENTS).map(critiqueOf),
      signals,
      categoryOf: arithmeticTeacher.categoryOf,
    },
  );
const exampleRows = (versionId: string) =>
  h.db.select().from(examples).where(eq(examples.datasetVersionId, versionId)).orderBy(examples.sourceRef, examples.contentHash);
const pairRows = (versionId: string) =>
  h.db.select().from(trainPairs).where(eq(trainPairs.datasetVersionId, versionId)).orderBy(trainPairs.sourceRef);
const pairsFileOf = (versionId: string): TrainPair[] | undefined => {
  const file = path.join(datasetDirOf(home, versionId), TRAIN_PAIRS_FILE);
  if (!fs.existsSync(file)) return undefined;
  return fs
    .readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TrainPair);
};

test("the arithmetic teacher critiques the iteration's failures; the production checkpoint revises them, and only right sums verify", async () => {
  const deps = { db: h.db, home };
  const r = await critiqueIterationFeedback(deps, { campaignId: C, campaignVersionId, outerIterationId: ITER, sample: 10, seed: 1 });
  expect(r.counts).toMatchObject({ created: 4, withExample: 2, noSignal: 2 });
  const [edit] = await h.db
    .select()
    .from(critiques)
    .where(eq(critiques.id, critiqueOf(EVENTS.edit)));
  expect(edit.teacher).toBe(ARITHMETIC_TEACHER);
  expect(edit.text).toContain('the tens digit is 3, not 4');
  expect(edit.signal).toEqual([
    { kind: 'sft', prompt: '12+34=', target: '046\n', weight: 1.333, category: 'no-carry' },
    { kind: 'pair', prompt: '12+34=', chosen: '046\n', rejected: '036\n', weight: 1.333 },
  ]);

  // The eval activity's step: no eval results to critique here, but the spec chooses `revision`.
  const ev = await critiqueEvalFailures(deps, {
    campaignId: C,
    campaignVersionId,
    outerIterationId: ITER,
    checkpointId: CKPT,
    suiteId: 'none@0',
    sample: 5,
    seed: 1,
  });
  expect(ev).toEqual({ failed: 0, critiqued: 0, created: 0, byCategory: {}, revisions: { revised: 4, verified: 2 } });
  const rows = await h.db.select().from(revisions).where(eq(revisions.outerIterationId, ITER)).orderBy(revisions.critiqueId);
  const byEvent = Object.fromEntries(rows.map((x) => [x.critiqueId, x]));
  expect(byEvent[critiqueOf(EVENTS.edit)]).toMatchObject({
    output: '046\n',
    verified: true,
    verifiedBy: `task:${ARITHMETIC_TEACHER}`,
    checkpointId: CKPT,
  });
  expect(byEvent[critiqueOf(EVENTS.reject)]).toMatchObject({ output: '064\n', verified: true });
  expect(byEvent[critiqueOf(EVENTS.rejectHard)].verified).toBe(false);
  expect(byEvent[critiqueOf(EVENTS.editHard)].verified).toBe(false);
  // The critique travels in the revision's prompt, before the original prompt.
  expect(byEvent[critiqueOf(EVENTS.edit)].prompt).toContain(edit.text);
  expect(byEvent[critiqueOf(EVENTS.edit)].prompt.endsWith('\n12+34=')).toBe(true);
  // A retry revises nothing twice.
  const again = await critiqueEvalFailures(deps, {
    campaignId: C,
    campaignVersionId,
    outerIterationId: ITER,
    checkpointId: CKPT,
    suiteId: 'none@0',
    sample: 5,
    seed: 1,
  });
  expect(again.revisions).toEqual({ revised: 0, verified: 0 });
}, 180_000);

test('reference: the verified corrections as weighted SFT examples, no pairs; the default builds the same version', async () => {
  const v = await build(['reference']);
  const added = (await exampleRows(v.versionId)).filter((e) => e.source !== 'corpus');
  expect(added.map((e) => [e.sourceRef, e.prompt, e.completion, e.builder, e.source, e.weight])).toEqual([
    [critiqueOf(EVENTS.edit), '12+34=', '046\n', 'reference', 'critique', 1.333],
    [critiqueOf(EVENTS.editHard), '99+99=', '198\n', 'reference', 'critique', 1.333],
  ]);
  expect(pairsFileOf(v.versionId)).toBeUndefined();
  expect(v.counts.pairs).toBeUndefined();
  const byDefault = await buildDatasetVersion(
    { db: h.db, home },
    { campaignId: C, parentVersionId: PARENT, critiqueIds: Object.values(EVENTS).map(critiqueOf) },
  );
  expect(byDefault.versionId).toBe(v.versionId);
});

test('revision: verified revisions become SFT examples and the chosen side over the real output; unverified ones yield nothing', async () => {
  const v = await build(['revision']);
  const added = (await exampleRows(v.versionId)).filter((e) => e.source !== 'corpus');
  expect(added.map((e) => [e.sourceRef, e.prompt, e.completion, e.builder, e.source, e.category])).toEqual([
    [critiqueOf(EVENTS.edit), '12+34=', '046\n', 'revision', 'revision', 'no-carry'],
    // A reject has no reference to name its category: the task's teacher does.
    [critiqueOf(EVENTS.reject), '21+43=', '064\n', 'revision', 'revision', 'no-carry'],
  ]);
  const pairs = pairsFileOf(v.versionId)!;
  expect(pairs.map((p) => [p.prompt, p.chosen, p.rejected, p.source, p.lineage])).toEqual([
    ['12+34=', '046\n', '036\n', 'revision', { builder: 'revision', feedbackEventId: EVENTS.edit.id, critiqueId: critiqueOf(EVENTS.edit) }],
    [
      '21+43=',
      '064\n',
      '054\n',
      'revision',
      { builder: 'revision', feedbackEventId: EVENTS.reject.id, critiqueId: critiqueOf(EVENTS.reject) },
    ],
  ]);
  // Nothing at all from the two revisions that did not verify.
  const everything = JSON.stringify([
    added,
    pairs,
    fs.readFileSync(path.join(datasetDirOf(home, v.versionId), TRAIN_EXAMPLES_FILE), 'utf8'),
  ]);
  expect(everything).not.toContain('99+99=');
  expect(v.counts).toMatchObject({ added: 2, pairs: 2 });
});

test('critique: (prompt, output) → the critique text, from failures with a verified reference only', async () => {
  const v = await build(['critique']);
  const added = (await exampleRows(v.versionId)).filter((e) => e.source !== 'corpus');
  const texts = await h.db.select({ id: critiques.id, text: critiques.text }).from(critiques);
  const textOf = Object.fromEntries(texts.map((t) => [t.id, t.text]));
  expect(added.map((e) => [e.sourceRef, e.prompt, e.completion, e.category, e.builder, e.source])).toEqual([
    [critiqueOf(EVENTS.edit), critiquePromptOf('12+34=', '036\n'), textOf[critiqueOf(EVENTS.edit)], 'critique', 'critique', 'critic'],
    [
      critiqueOf(EVENTS.editHard),
      critiquePromptOf('99+99=', '188\n'),
      textOf[critiqueOf(EVENTS.editHard)],
      'critique',
      'critique',
      'critic',
    ],
  ]);
  expect(added[0].completion).toContain('the tens digit is 3, not 4');
  expect(added[1].completion).toContain('the carry from the units column (9+9=18) was dropped');
  expect(pairsFileOf(v.versionId)).toBeUndefined();
});

test('pairs: the verified reference chosen over the real production output, in pairs.jsonl and queryable with its lineage', async () => {
  const v = await build(['pairs']);
  expect((await exampleRows(v.versionId)).every((e) => e.source === 'corpus')).toBe(true);
  const file = pairsFileOf(v.versionId)!;
  expect(file.map((p) => [p.prompt, p.chosen, p.rejected, p.category, p.source])).toEqual([
    ['12+34=', '046\n', '036\n', 'no-carry', 'pairs'],
    ['99+99=', '198\n', '188\n', 'carry', 'pairs'],
  ]);
  // The rejected side is the event's own output, byte for byte.
  const outputs = await h.db.select({ id: feedbackEvents.id, output: feedbackEvents.output }).from(feedbackEvents);
  const outputOf = Object.fromEntries(outputs.map((o) => [o.id, o.output]));
  for (const p of file) expect(p.rejected).toBe(outputOf[p.lineage!.feedbackEventId!]);
  const rows = await pairRows(v.versionId);
  expect(rows.map((r) => [r.sourceRef, r.builder, r.lineage])).toEqual([
    [critiqueOf(EVENTS.edit), 'pairs', { builder: 'pairs', feedbackEventId: EVENTS.edit.id, critiqueId: critiqueOf(EVENTS.edit) }],
    [
      critiqueOf(EVENTS.editHard),
      'pairs',
      { builder: 'pairs', feedbackEventId: EVENTS.editHard.id, critiqueId: critiqueOf(EVENTS.editHard) },
    ],
  ]);
  // A child version keeps its parent's pairs, as it keeps its examples.
  const child = await buildDatasetVersion(
    { db: h.db, home },
    { campaignId: C, parentVersionId: v.versionId, critiqueIds: [], signals: [] },
  );
  expect(pairsFileOf(child.versionId)).toEqual(file);
});

test('every builder together: lineage from a checkpoint trained on the version names each builder, critique and event', async () => {
  const v = await build(['reference', 'revision', 'critique', 'pairs']);
  // The verified revision of the edit equals its reference: one example, the reference builder's; one pair.
  expect(v.counts.bySource).toEqual({ corpus: 2, critique: 2, critic: 2, revision: 1 });
  expect(v.counts.pairs).toBe(3);
  const exp = `${C}/outer/i1/inner/e0`;
  await h.db.insert(experiments).values({
    id: exp,
    campaignId: C,
    campaignVersionId,
    innerLoopId: `${C}/outer/i1/inner`,
    index: 0,
    datasetVersionId: v.versionId,
    params: {},
    proposer: 'test',
    status: 'succeeded',
  });
  await trainCheckpoint({
    dir: path.join(home, 'ckpt'),
    id: `${exp}/r1/step-5`,
    text: TRAINED,
    seed: 1,
    steps: 5,
    db: h.db,
    experimentId: exp,
  });
  const l = (await checkpointLineage(h.db, `${exp}/r1/step-5`))!;
  expect(l.dataset!.critiques.total).toBe(5);
  expect(l.dataset!.critiques.items.map((i) => [i.critiqueId, i.example.builder, i.feedback?.id])).toEqual(
    expect.arrayContaining([
      [critiqueOf(EVENTS.reject), 'revision', EVENTS.reject.id],
      [critiqueOf(EVENTS.edit), 'reference', EVENTS.edit.id],
      [critiqueOf(EVENTS.edit), 'critique', EVENTS.edit.id],
    ]),
  );
  expect(l.dataset!.pairs.byBuilder).toEqual({ pairs: 2, revision: 1 });
  expect(l.dataset!.pairs.items.map((p) => [p.builder, p.feedbackEventId])).toEqual(
    expect.arrayContaining([
      ['pairs', EVENTS.edit.id],
      ['revision', EVENTS.reject.id],
    ]),
  );
});

test('no signals: the version is the parent examples, nothing derived', async () => {
  const v = await build([]);
  expect(v.counts.bySource).toEqual({ corpus: 2 });
  expect(v.counts.added).toBe(0);
  expect(pairsFileOf(v.versionId)).toBeUndefined();
  expect(
    await h.db
      .select()
      .from(trainPairs)
      .where(and(eq(trainPairs.datasetVersionId, v.versionId))),
  ).toEqual([]);
});

test('a pair whose side reproduces an eval item is removed at build, and one planted in a version is refused before training', async () => {
  const item = { prompt: 'Spell the sum out: ', reference: 'one hundred and ninety-eight, in words\n' };
  await h.db.insert(evalItems).values({
    id: 'words@1/pub-1',
    suiteId: 'words@1',
    split: 'public',
    grader: 'exact_match',
    ...item,
    contentHash: sha(item.prompt + item.reference),
    sourceFile: 'f',
  });
  await h.db.insert(feedbackEvents).values({
    id: 'e-leak',
    campaignId: C,
    kind: 'edit',
    modelVersion: CKPT,
    prompt: item.prompt,
    output: 'one hundred\n',
    correction: item.reference,
  });
  const { critiqueIds } = await critiqueFeedback(h.db, { campaignId: C, eventIds: ['e-leak'] });
  const v = await buildDatasetVersion({ db: h.db, home }, { campaignId: C, parentVersionId: PARENT, critiqueIds, signals: ['pairs'] });
  expect(v.counts.removed).toBe(1);
  expect(v.removed).toEqual([{ sourceRef: critiqueIds[0], evalItemIds: ['words@1/pub-1'] }]);
  expect(pairsFileOf(v.versionId)).toBeUndefined();

  // A clean version with pairs passes; the same with a pair row planted to carry the item is refused by name.
  const clean = await build(['pairs']);
  await expect(checkContamination({ db: h.db, home }, { datasetVersionId: clean.versionId, reader: 'test' })).resolves.toMatchObject({
    datasetVersionId: clean.versionId,
  });
  await h.db.insert(trainPairs).values({
    datasetVersionId: clean.versionId,
    contentHash: 'planted',
    source: 'pairs',
    sourceRef: 'planted-critique',
    builder: 'pairs',
    category: 'carry',
    prompt: item.prompt,
    chosen: item.reference,
    rejected: 'x',
    lineage: { builder: 'pairs' },
  });
  await expect(checkContamination({ db: h.db, home }, { datasetVersionId: clean.versionId, reader: 'test' })).rejects.toThrow(
    /pair pairs:planted-critique/,
  );
});

test("feedback keeps the task's shape: the event's category (else its nearest example's) and the data's trailing newline", async () => {
  // Two edits whose corrections lack the "\n" every base completion ends with: one names its category, one names none
  // and has a base example's prompt (its category is that example's, not the teacher's).
  const shaped = [
    { id: 'e-shaped-own', prompt: '13+13=', output: '016\n', correction: '026', category: 'user-named' },
    { id: 'e-shaped-near', prompt: '11+11=', output: '011\n', correction: '22', category: null },
  ];
  await h.db
    .insert(feedbackEvents)
    .values(shaped.map((e) => ({ ...e, kind: 'edit', campaignId: C, modelVersion: CKPT, ingestedBy: ITER })));
  await h.db.insert(critiques).values(
    shaped.map((e) => ({
      id: critiqueOf(e),
      campaignId: C,
      sourceKind: 'feedback',
      sourceId: e.id,
      teacher: 'test',
      promptVersion: '1',
      text: 'wrong sum',
      // The teacher's own category for both: what every feedback example carried before (the built-in default).
      signal: [{ kind: 'sft' as const, prompt: e.prompt, target: e.correction, weight: 1, category: 'code' }],
    })),
  );
  const v = await buildDatasetVersion(
    { db: h.db, home },
    { campaignId: C, parentVersionId: PARENT, critiqueIds: shaped.map(critiqueOf), signals: ['reference'], categoryOf: () => 'teacher' },
  );
  const added = (await exampleRows(v.versionId)).filter((e) => e.source !== 'corpus');
  expect(added.map((e) => [e.sourceRef, e.prompt, e.completion, e.category])).toEqual([
    [critiqueOf(shaped[1]), '11+11=', '22\n', 'no-carry'],
    [critiqueOf(shaped[0]), '13+13=', '026\n', 'user-named'],
  ]);
});
