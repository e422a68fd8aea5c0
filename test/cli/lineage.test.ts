// `flywheel lineage`: from a checkpoint back to the user feedback behind its training examples, over rows written by
// the real activities (storeFeedback → critiqueFeedback → buildDatasetVersion) and a checkpoint trained on the result.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { storeFeedback } from '../../services/feedback-store';
import { buildDatasetVersion } from '../../activities/outer/build-dataset-version';
import { critiqueFeedback } from '../../activities/outer/critique-feedback';
import { datasetDirOf } from '../../services/paths';
import { checkpointLineage } from '../../services/lineage';
import type { FeedbackEvent } from '../../core/feedback';
import type { DbHandle } from '../../db/client';
import { datasets, datasetVersions, decisions, examples, experiments, feedbackEvents, innerLoops, trainingRuns } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { applyPatch } from '../../services/recipes/apply-patch';
import { setExperimentCommit } from '../../services/recipes/experiment-commit';
import { keepCommit } from '../../services/recipes/recipe-commits';
import { recordPatch } from '../../services/recipes/recipe-patches';
import { recipeRepoOf } from '../../services/recipes/recipe-repo';
import { promote, trainCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');
const home = scratchDir('lineage');
const sha = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
const PARENT = 'c1/code@base-test';
const EXP = 'c1/outer/i1/inner/e0';
const CKPT = `${EXP}/r1/step-20`;
const corpus = ['src/b.ts', 'src/a.ts', 'src/c.ts'].map((ref, i) => ({ ref, text: `export const v${i} = (n: number) => n * ${i + 2};\n` }));
let h: DbHandle;
let dbUrl: string;
let versionId: string;
// The experiment ran a researcher's patch to the campaign's recipe, which was kept.
const DIFF = 'diff --git a/train.py b/train.py\n--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.01\n+lr = 0.02\n';
let imported: string;
let patched: string;

beforeAll(async () => {
  ({ handle: h, url: dbUrl } = await freshDatabase('lineage'));
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
  await db
    .insert(datasetVersions)
    .values({ id: PARENT, datasetId: 'c1/code', path: dir, contentHash: 'parent-hash', countsBySource: { corpus: 3 } });

  const ev = (id: string, kind: FeedbackEvent['kind'], over: Partial<FeedbackEvent> = {}): FeedbackEvent => ({
    id,
    campaignId: 'c1',
    kind,
    modelVersion: 'c1/old/step-9',
    prompt: 'function sum(xs: number[]) {\n',
    output: '  return 0;\n}',
    ...over,
  });
  await storeFeedback(db, [
    ev('fb-3', 'edit', { correction: '  return xs.length;\n}', comment: 'count them' }),
    ev('fb-1', 'edit', { correction: '  return xs.reduce((a, b) => a + b, 0);\n}' }),
    ev('fb-2', 'edit', { prompt: 'const half = (x: number) => ', output: 'x', correction: 'x / 2;' }),
    ev('fb-4', 'reject', { comment: 'no' }),
    ev('fb-5', 'accept'),
  ]);
  await db.update(feedbackEvents).set({ ingestedBy: 'c1/outer/i1' });
  const c = await critiqueFeedback(db, {
    campaignId: 'c1',
    eventIds: ['fb-1', 'fb-2', 'fb-3', 'fb-4', 'fb-5'],
    outerIterationId: 'c1/outer/i1',
  });
  const v = await buildDatasetVersion(
    { db, home },
    { campaignId: 'c1', parentVersionId: PARENT, critiqueIds: c.critiqueIds, mix: { critique: 2 }, lossWeights: { code: 1.5 } },
  );
  versionId = v.versionId;

  await db.insert(experiments).values({
    id: EXP,
    campaignId: 'c1',
    innerLoopId: 'c1/outer/i1/inner',
    index: 0,
    datasetVersionId: versionId,
    params: { lr: 0.02, steps: 20 },
    proposer: 'tpe',
    status: 'succeeded',
    publicScore: 0.25,
  });
  await db.insert(innerLoops).values({
    id: 'c1/outer/i1/inner',
    campaignId: 'c1',
    datasetVersionId: versionId,
    baseCheckpointId: 'c1/inner/e2/r1/step-300',
    status: 'completed',
  });
  await db.insert(decisions).values({
    id: 'c1/outer/i1/gate',
    campaignId: 'c1',
    kind: 'promote',
    checkpointId: CKPT,
    experimentId: EXP,
    rule: 'heldout-margin',
    reason: 'held-out improved by 0.04 bits per byte',
    accepted: true,
  });
  await db.insert(trainingRuns).values({
    id: `${EXP}/r1`,
    experimentId: EXP,
    attempt: 1,
    backend: 'local',
    runDir: path.join(home, 'runs', 'r1'),
    status: 'succeeded',
  });
  const folder = path.join(home, 'recipe-src');
  fs.mkdirSync(folder);
  fs.writeFileSync(path.join(folder, 'train.py'), 'lr = 0.01\n');
  const registered = await registerCampaignVersion(
    db,
    {
      name: 'c1',
      task: { kind: 'builtin-code', completionItems: 10, lossItems: 5 },
      trainer: { command: ['python3', '{recipe}/train.py'], recipe: { path: folder, mutable: ['train.py'] } },
      searchSpace: { lr: { type: 'categorical', choices: [0.02] } },
    },
    'spec.yaml',
    home,
  );
  imported = registered.spec.trainer.recipe!.commit!;
  const applied = applyPatch(recipeRepoOf(home, 'c1'), imported, DIFF, 'patch');
  if (!applied.ok) throw new Error(applied.reason);
  patched = applied.commit;
  await recordPatch(db, {
    id: 'c1/outer/i1/inner/researcher/p0',
    campaignId: 'c1',
    innerLoopId: 'c1/outer/i1/inner',
    experimentId: EXP,
    baseCommit: imported,
    commit: patched,
    diff: DIFF,
    normalizedHash: sha(DIFF),
    summary: 'train.py +1 -1',
    proposer: 'researcher:ada',
    hypothesis: 'a higher rate learns faster',
    status: 'accepted',
  });
  await setExperimentCommit(db, EXP, patched);
  await keepCommit(db, { campaignId: 'c1', commit: patched, parent: imported, experimentId: EXP, score: 0.25 });
  const text = fs.readFileSync(path.join(datasetDirOf(home, versionId), 'train.txt'), 'utf8');
  await trainCheckpoint({ dir: path.join(home, 'ckpt'), id: CKPT, text, seed: 1, steps: 20, db, experimentId: EXP });
  await promote(db, 'c1', CKPT);
});
afterAll(async () => {
  await h?.close();
});

test('walks from the checkpoint through its run, experiment and dataset version to the feedback behind each critique', async () => {
  const l = (await checkpointLineage(h.db, CKPT))!;
  expect(l.checkpoint).toMatchObject({ id: CKPT, step: 20, format: 'charlm-v1' });
  expect(l.inProductionFor).toEqual(['c1']);
  expect(l.run).toMatchObject({ id: `${EXP}/r1`, attempt: 1, backend: 'local', status: 'succeeded' });
  expect(l.experiment).toMatchObject({ id: EXP, campaignId: 'c1', index: 0, params: { lr: 0.02, steps: 20 }, publicScore: 0.25 });
  const d = l.dataset!;
  expect(d.version).toMatchObject({
    id: versionId,
    parentIds: [PARENT],
    countsBySource: { corpus: 3, critique: 3 },
    mixWeights: { corpus: 1, critique: 2 },
    lossWeights: { code: 1.5 },
  });
  expect(d.ancestors.map((a) => a.id)).toEqual([PARENT]);
  expect(d.examplesBySource).toEqual({ corpus: 3, critique: 3 });
  expect(d.corpus).toEqual({ count: 3, files: ['src/a.ts', 'src/b.ts', 'src/c.ts'] });
  expect(d.critiques).toMatchObject({ total: 3, offset: 0, limit: 50 });
  expect(d.critiques.items.map((i) => [i.critiqueId, i.critique?.sourceId, i.feedback?.id, i.feedback?.kind])).toEqual([
    ['c1/critique/fb-1', 'fb-1', 'fb-1', 'edit'],
    ['c1/critique/fb-2', 'fb-2', 'fb-2', 'edit'],
    ['c1/critique/fb-3', 'fb-3', 'fb-3', 'edit'],
  ]);
  expect(d.critiques.items[2]).toMatchObject({
    critique: { teacher: 'builtin', promptVersion: 'builtin-diff-v1', sourceKind: 'feedback', outerIterationId: 'c1/outer/i1' },
    feedback: { modelVersion: 'c1/old/step-9', comment: 'count them', ingestedBy: 'c1/outer/i1' },
  });
  expect(l.warmStartFrom).toBe('c1/inner/e2/r1/step-300');
  expect(l.experiment!.recipe).toEqual({
    commit: patched,
    patch: {
      id: 'c1/outer/i1/inner/researcher/p0',
      parent: imported,
      proposer: 'researcher:ada',
      summary: 'train.py +1 -1',
      hypothesis: 'a higher rate learns faster',
      status: 'accepted',
      reason: null,
      diff: DIFF,
    },
  });
  expect(l.decisions).toMatchObject([{ id: 'c1/outer/i1/gate', kind: 'promote', rule: 'heldout-margin', accepted: true }]);

  const page = (await checkpointLineage(h.db, CKPT, { limit: 1, offset: 1 }))!.dataset!.critiques;
  expect(page.items.map((i) => i.critiqueId)).toEqual(['c1/critique/fb-2']);
  expect(await checkpointLineage(h.db, 'nope')).toBeUndefined();
});

function cli(args: string[], command = 'lineage'): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [BIN, ...command.split(' '), ...args],
      { env: { ...process.env, DATABASE_URL: dbUrl, FLYWHEEL_HOME: home }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    ),
  );
}

test('`flywheel lineage` prints the chain, pages it with --limit/--offset, and exits 2 for an unknown checkpoint', async () => {
  const text = await cli([CKPT, '--limit', '2']);
  expect(text.stderr).toBe('');
  expect(text.status).toBe(0);
  expect(text.stdout).toContain(`checkpoint  ${CKPT}  step 20, charlm-v1`);
  expect(text.stdout).toContain('in production for c1');
  expect(text.stdout).toContain(
    'decision    c1/outer/i1/gate  promote by heldout-margin, accepted: "held-out improved by 0.04 bits per byte"',
  );
  expect(text.stdout).toContain('warm-started from c1/inner/e2/r1/step-300');
  expect(text.stdout).toContain(`recipe      commit ${patched}, parent ${imported}`);
  expect(text.stdout).toContain('  patch     c1/outer/i1/inner/researcher/p0  train.py +1 -1 by researcher:ada, accepted');
  expect(text.stdout).toContain('    | -lr = 0.01\n    | +lr = 0.02\n');
  expect(text.stdout).toContain(`dataset     ${versionId}`);
  expect(text.stdout).toContain(`  parent    ${PARENT}`);
  expect(text.stdout).toContain('examples    corpus 3, critique 3');
  expect(text.stdout).toContain('  corpus    3 files: src/a.ts, src/b.ts, src/c.ts');
  expect(text.stdout).toContain('  from critiques 1-2 of 3:');
  expect(text.stdout).toMatch(/feedback {2}fb-1: edit on c1\/old\/step-9, received \d{4}-[^,]+, ingested by c1\/outer\/i1/);
  expect(text.stdout).toContain('critique  builtin builtin-diff-v1 in c1/outer/i1: "Derived mechanically');
  expect(text.stdout).not.toContain('fb-3');
  expect(text.stdout).toContain('… 1 more: --offset 2');

  const json = await cli([CKPT, '--json', '--offset', '2']);
  expect(JSON.parse(json.stdout).dataset.critiques.items.map((i: { feedback: { id: string } }) => i.feedback.id)).toEqual(['fb-3']);

  const unknown = await cli(['no/such/step-1']);
  expect(unknown).toEqual({ status: 2, stdout: '', stderr: 'flywheel: no checkpoint "no/such/step-1"\n' });
});

test("`flywheel recipe show` prints the best commit's files or a commit's diff; `recipe log` the kept history with scores", async () => {
  const best = await cli(['c1'], 'recipe show');
  expect(best).toEqual({ status: 0, stdout: `commit ${patched}\n\n==> train.py <==\nlr = 0.02\n`, stderr: '' });
  const first = await cli([`c1@${imported.slice(0, 8)}`, '--file', 'train.py'], 'recipe show');
  expect(first).toEqual({ status: 0, stdout: 'lr = 0.01\n', stderr: '' });
  const diff = await cli([`c1@${patched}`, '--diff'], 'recipe show');
  expect(diff.status).toBe(0);
  expect(diff.stdout).toMatch(/^diff --git a\/train.py b\/train.py\n[^]*-lr = 0\.01\n\+lr = 0\.02\n$/);
  expect(await cli(['c1@0000000'], 'recipe show')).toMatchObject({
    status: 2,
    stderr: 'flywheel: the recipe of "c1" has no commit 0000000 (or more than one starts so: give more digits)\n',
  });

  const log = await cli(['c1'], 'recipe log');
  expect(log.stderr).toBe('');
  expect(log.stdout).toMatch(
    new RegExp(
      `^commit ${patched}  \\(best\\)\nParent: ${imported}\nKept:   \\d{4}-\\d\\d-\\d\\d [\\d:]{8}, public \\S+ 0\\.25 by ${EXP}\nPatch:  train\\.py \\+1 -1 by researcher:ada\n    a higher rate learns faster\n\ncommit ${imported}\nImported from`,
    ),
  );
  expect(await cli(['nope'], 'recipe log')).toMatchObject({ status: 2, stderr: 'flywheel: unknown campaign "nope"\n' });
});
