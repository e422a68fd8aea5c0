// A DPO step on pairs the outer loop built: recorded feedback (a production model's wrong colours, corrected by
// users) → the built-in teacher's critiques → the `pairs` signal builder → the dataset version's pairs.jsonl, on a
// real PostgreSQL; then the Hugging Face trainer (real transformers and TRL), warm-started from a short SFT as an
// outer iteration starts from production, trains DPO on that file through run.json `dataset.pairsFile`. The
// preferred side's log-probability rises against the rejected one, measured outside the trainer
// (test/helpers/hf_probe.py, plain transformers on the frozen folders). Its absolute log-probability does not: on
// this tiny model DPO lowers both sides, the rejected far more (one small step included: -6.626 → -6.652 for the
// chosen, -8.291 → -8.622 for the rejected), so the test asserts the margin, which is what DPO optimises.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildDatasetVersion } from '../../activities/outer/build-dataset-version';
import { critiqueFeedback } from '../../activities/outer/critique-feedback';
import { TRAIN_PAIRS_FILE, type TrainPair } from '../../core/dataset/example-line';
import { datasetDirOf } from '../../services/paths';
import type { DbHandle } from '../../db/client';
import { datasets, datasetVersions, examples, feedbackEvents } from '../../db/schema';
import { freshDatabase } from '../helpers/env';
import { requires } from '../helpers/requires';
import { makeTinyHfModel } from '../helpers/tiny-hf-model';
import { COLOURS, TASK_TEXT, hfProbe, hfTrainer, makeHfRunDir, promptOf, readMetrics, writeDataset } from '../helpers/hf-trainer-run';

requires('hf');

const C = 'dpo';
const PARENT = `${C}/colours@base`;
let scratch: string;
let h: DbHandle;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'dpo-built-'));
  ({ handle: h } = await freshDatabase('dpo_built_pairs'));
}, 120_000);
afterAll(async () => {
  await h?.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

type LogProbs = { chosen: number; rejected: number }[];

test('DPO on the pairs builder’s pairs.jsonl raises log p(chosen), and more than log p(rejected), the real output', async () => {
  // The base version: the colour task's examples, as a registered dataset's version holds them.
  const base = path.join(scratch, 'base');
  writeDataset(base);
  const home = path.join(scratch, 'home');
  await h.db.insert(datasets).values({ id: `${C}/colours`, campaignId: C, name: 'colours' });
  await h.db.insert(examples).values(
    COLOURS.map(([thing, colour]) => ({
      datasetVersionId: PARENT,
      contentHash: crypto
        .createHash('sha256')
        .update(promptOf(thing) + colour)
        .digest('hex'),
      source: 'base',
      sourceRef: thing,
      content: promptOf(thing) + colour,
      prompt: promptOf(thing),
      completion: colour,
      category: 'colour',
    })),
  );
  await h.db.insert(datasetVersions).values({ id: PARENT, datasetId: `${C}/colours`, path: base, contentHash: 'base', countsBySource: {} });
  // The production model answered each thing with the next thing's colour; each user edited in the right one.
  await h.db.insert(feedbackEvents).values(
    COLOURS.map(([thing, colour], i) => ({
      id: `fb-${thing}`,
      campaignId: C,
      kind: 'edit',
      modelVersion: 'prod',
      prompt: promptOf(thing),
      output: COLOURS[(i + 1) % COLOURS.length][1],
      correction: colour,
    })),
  );
  const { critiqueIds } = await critiqueFeedback(h.db, { campaignId: C, eventIds: COLOURS.map(([t]) => `fb-${t}`) });
  const v = await buildDatasetVersion({ db: h.db, home }, { campaignId: C, parentVersionId: PARENT, critiqueIds, signals: ['pairs'] });
  expect(v.counts.pairs).toBe(COLOURS.length);
  const version = datasetDirOf(home, v.versionId);
  const pairsFile = path.join(version, TRAIN_PAIRS_FILE);
  const built = fs
    .readFileSync(pairsFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TrainPair);
  for (const p of built) {
    const i = COLOURS.findIndex(([t]) => promptOf(t) === p.prompt);
    expect([p.chosen, p.rejected, p.lineage?.builder]).toEqual([COLOURS[i][1], COLOURS[(i + 1) % COLOURS.length][1], 'pairs']);
  }

  // A short SFT first, so the start is a plausible production model rather than noise.
  const model = makeTinyHfModel(path.join(scratch, 'model'), { text: TASK_TEXT });
  const sft = makeHfRunDir(path.join(scratch, 'sft'), base, { model, lr: 0.003, batchSize: 8, steps: 40, logEvery: 40 }, 0);
  expect(hfTrainer(['train', '--run-dir', sft]).status).toBe(0);
  const start = path.join(sft, 'checkpoints', 'step-40');

  // run.json names the built version's files, pairs.jsonl among them; objective "dpo" trains on the pairs.
  const dir = makeHfRunDir(
    path.join(scratch, 'dpo'),
    version,
    { objective: 'dpo', lr: 0.002, batchSize: 4, steps: 40, logEvery: 20, dpoBeta: 0.1, dpoSftWeight: 1 },
    0,
    { baseCheckpoint: start },
  );
  expect((JSON.parse(fs.readFileSync(path.join(dir, 'run.json'), 'utf8')) as { dataset: { pairsFile: string } }).dataset.pairsFile).toBe(
    pairsFile,
  );
  const r = hfTrainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(readMetrics(dir).map((l) => l.step)).toEqual([20, 40]);

  const before = hfProbe<LogProbs>('logprobs', start, pairsFile);
  const after = hfProbe<LogProbs>('logprobs', path.join(dir, 'checkpoints', 'step-40'), pairsFile);
  const margin = (lp: LogProbs) => lp.reduce((s, p) => s + p.chosen - p.rejected, 0) / lp.length;
  // The preferred side gained on the rejected (real) output by more than a nat on average, and on most pairs.
  expect(margin(after)).toBeGreaterThan(margin(before) + 1);
  expect(after.filter((p, i) => p.chosen - p.rejected > before[i].chosen - before[i].rejected).length).toBeGreaterThanOrEqual(8);

  // And the preferred completion's own log-probability rose, on average and on most pairs: the SFT term on the chosen
  // side (dpoSftWeight) does that; plain DPO (dpoSftWeight 0) lowered both sides here, the rejected far more.
  expect(mean(after.map((p) => p.chosen))).toBeGreaterThan(mean(before.map((p) => p.chosen)));
  expect(after.filter((p, i) => p.chosen > before[i].chosen).length).toBeGreaterThanOrEqual(8);
  console.log(
    `dpo on built pairs: mean log p(chosen) ${mean(before.map((p) => p.chosen)).toFixed(3)} -> ${mean(after.map((p) => p.chosen)).toFixed(3)}, ` +
      `log p(rejected) ${mean(before.map((p) => p.rejected)).toFixed(3)} -> ${mean(after.map((p) => p.rejected)).toFixed(3)}, ` +
      `margin ${margin(before).toFixed(3)} -> ${margin(after).toFixed(3)}`,
  );
}, 900_000);

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
