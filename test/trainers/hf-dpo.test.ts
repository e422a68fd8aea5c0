// DPO on a dataset version's preference pairs (pairs.jsonl, the outer loop's pair signals): the Hugging Face trainer,
// started from an SFT checkpoint as a warm-started outer iteration starts from production (run.json baseCheckpoint),
// moves the preferred completion's log-probability up relative to the rejected one. The log-probabilities are computed
// outside the trainer (test/helpers/hf_probe.py, plain transformers on the frozen folders).
import crypto from 'node:crypto';
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

test('DPO on pairs moves the chosen completion up relative to the rejected one, from a warm start; auto refuses a version with examples and pairs', () => {
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
  // The version has examples (train.jsonl) and pairs: objective "auto" would train on one and drop the other, so it
  // refuses in one line, naming both counts and the choice, and writes nothing.
  const dpoParams = { lr: 0.002, batchSize: 4, steps: 40, logEvery: 20, dpoBeta: 0.1 };
  const auto = makeHfRunDir(path.join(scratch, 'auto'), data, dpoParams, 0, { baseCheckpoint: start });
  const refused = hfTrainer(['train', '--run-dir', auto]);
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(
    /^hf-trainer: run\.json: params\.objective is "auto" but the dataset version has both examples \(10 drawable in .*train\.jsonl\) and preference pairs \(10 in .*pairs\.jsonl\); .*set params\.objective to "sft" \(the examples\) or "dpo" \(the pairs; .*\)\n$/,
  );
  expect(fs.readdirSync(auto)).toEqual(['run.json']);

  // No params.model: the baseCheckpoint is what is trained.
  const dir = makeHfRunDir(path.join(scratch, 'dpo'), data, { ...dpoParams, objective: 'dpo' }, 0, { baseCheckpoint: start });
  const r = hfTrainer(['train', '--run-dir', dir]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  // What it drew from: every pair, 40 steps x 4 of them in all, each by line and hash; the examples it left unread.
  const used = JSON.parse(fs.readFileSync(path.join(dir, 'training-data.json'), 'utf8')) as {
    objective: string;
    file: string;
    lines: number;
    drawable: number;
    draws: number;
    used: { line: number; sha256: string; weight: number; draws: number }[];
    unread: { file: string; lines: number };
  };
  expect([used.objective, used.file, used.lines, used.drawable, used.draws]).toEqual(['dpo', pairsFile, 10, 10, 160]);
  expect(used.used.map((u) => u.line)).toEqual(PAIRS.map((_, i) => i + 1));
  expect(used.used.reduce((n, u) => n + u.draws, 0)).toBe(160);
  const pairLines = fs.readFileSync(pairsFile, 'utf8').trim().split('\n');
  expect(used.used.map((u) => u.sha256)).toEqual(pairLines.map((l) => crypto.createHash('sha256').update(l).digest('hex')));
  expect(used.unread).toEqual({ file: path.join(data, 'train.jsonl'), lines: 10 });
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
