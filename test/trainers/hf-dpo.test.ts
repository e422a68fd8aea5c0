// DPO on a dataset version's preference pairs (pairs.jsonl, the outer loop's pair signals): the Hugging Face trainer,
// started from an SFT checkpoint as a warm-started outer iteration starts from production (run.json baseCheckpoint),
// moves the preferred completion's log-probability up relative to the rejected one. The log-probabilities are computed
// outside the trainer (test/helpers/hf_probe.py, plain transformers on the frozen folders).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requires } from '../helpers/requires';
import { makeTinyHfModel } from '../helpers/tiny-hf-model';
import {
  COLOURS,
  TASK_TEXT,
  hfProbe,
  hfTrainer,
  makeHfRunDir,
  promptOf,
  readManifest,
  readMetrics,
  writeDataset,
} from '../helpers/hf-trainer-run';

requires('hf');

let scratch: string;
// The rejected answer is another thing's colour (a plausible, real-looking output); the chosen is the right one.
const PAIRS = COLOURS.map(([thing, colour], i) => ({
  prompt: promptOf(thing),
  chosen: colour,
  rejected: COLOURS[(i + 1) % COLOURS.length][1],
}));

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-dpo-'));
}, 120_000);

afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

type LogProbs = { chosen: number; rejected: number }[];
const meanMargin = (lp: LogProbs) => lp.reduce((s, p) => s + p.chosen - p.rejected, 0) / lp.length;

test('DPO on pairs moves the chosen completion up relative to the rejected one, from a warm start', () => {
  const model = makeTinyHfModel(path.join(scratch, 'model'), { text: TASK_TEXT });
  // A short SFT first, so the start model is a plausible production model rather than noise.
  const sftData = path.join(scratch, 'sft-data');
  writeDataset(sftData);
  const sft = makeHfRunDir(path.join(scratch, 'sft'), sftData, { model, lr: 0.003, batchSize: 8, steps: 40, logEvery: 40 }, 0);
  expect(hfTrainer(['train', '--run-dir', sft]).status).toBe(0);
  const start = path.join(sft, 'checkpoints', 'step-40');

  const data = path.join(scratch, 'pairs-data');
  writeDataset(data, PAIRS);
  const pairsFile = path.join(data, 'pairs.jsonl');
  // No params.model: the baseCheckpoint is what is trained; objective "auto" is DPO because the version has pairs.
  const dir = makeHfRunDir(path.join(scratch, 'dpo'), data, { lr: 0.002, batchSize: 4, steps: 40, logEvery: 20, dpoBeta: 0.1 }, 0, {
    baseCheckpoint: start,
  });
  const r = hfTrainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const lines = readMetrics(dir);
  expect(lines.map((l) => l.step)).toEqual([20, 40]);
  for (const l of lines)
    for (const k of ['loss', 'lr', 'tokens', 'tokens_per_s', 'reward_margin']) expect(Number.isFinite(l[k])).toBe(true);
  expect(readManifest(dir).checkpoints.map((c) => c.step)).toEqual([40]);

  const before = hfProbe<LogProbs>('logprobs', start, pairsFile);
  const after = hfProbe<LogProbs>('logprobs', path.join(dir, 'checkpoints', 'step-40'), pairsFile);
  // Relative to the start: the margin log p(chosen) - log p(rejected) grew, on average by more than a nat, and for
  // most pairs.
  expect(meanMargin(after)).toBeGreaterThan(meanMargin(before) + 1);
  const improved = after.filter((p, i) => p.chosen - p.rejected > before[i].chosen - before[i].rejected).length;
  expect(improved).toBeGreaterThanOrEqual(8);
  // The loss the trainer streams is DPO's: it starts at ln 2 (policy = reference) and falls.
  expect(lines[1].loss).toBeLessThan(Math.log(2));
}, 900_000);
