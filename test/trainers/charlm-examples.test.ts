// The built-in trainer on a dataset version's examples (run.json `dataset.examplesFile`): targets are drawn only
// from completions, an example in proportion to its weight whatever its length (0: never); a task made here (copy the digit) is learnt
// well enough that `predict` answers held-out prompts the untrained model cannot; a resumed run is bit-for-bit the
// uninterrupted one; a dataset that cannot train anything, or a bad line, fails with one line; a version without
// train.jsonl still trains on its text.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MetricLine } from '../../core/job-contract';
import type { TrainExample } from '../../core/dataset/example-line';
import { Rng } from '../../core/stream-rng';
import { BOS_ID, encodeText } from '../../formats/charlm/vocab';
import { decodeCheckpoint, encodeCheckpoint, greedyComplete, type CharLmCheckpoint } from '../../formats/charlm/model';
import { ExampleCorpusBuilder, drawTarget, fillExampleWindow, type ExampleCorpus } from '../../trainers/charlm/example-corpus';
import { trainCharLm } from '../../trainers/charlm/train';
import { asTrainExamples, copyTask, exactShare, writePrompts, writeRunJson, writeVersion } from './copy-task';

const REPO = path.join(__dirname, '..', '..');
const MAIN = path.join(REPO, 'trainers', 'charlm', 'main.ts');
const RUN_TS = path.join(REPO, 'bin', 'run-ts.js');
const SMALL = { context: 4, embed: 8, hidden: 32, batchSize: 32, lr: 0.02 };

const trainer = (args: string[]) => spawnSync(process.execPath, [RUN_TS, MAIN, ...args], { encoding: 'utf8', timeout: 60_000 });
const readMetrics = (dir: string): MetricLine[] =>
  fs
    .readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MetricLine);

function corpusOf(examples: Array<{ prompt: string; completion: string; weight: number }>): ExampleCorpus {
  const b = new ExampleCorpusBuilder();
  for (const e of examples) b.add({ ...e, category: 'general' });
  return b.finish();
}

let scratch: string;
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'charlm-examples-'));
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('drawing a training window', () => {
  // Prompts upper case, completions lower case: a target or context byte's case says where it came from.
  const examples = [
    { prompt: 'AB=', completion: 'xy', weight: 1 },
    { prompt: 'CDEFG=', completion: 'z', weight: 3 },
    { prompt: 'H=', completion: 'never', weight: 0 },
    { prompt: 'IJ=', completion: '', weight: 5 },
    { prompt: '', completion: 'uvw', weight: 2 },
  ];
  const corpus = corpusOf(examples);
  const C = 4;

  test('targets lie in completions (or their end), never in prompts; weight 0 and empty completions are never drawn', () => {
    const rng = new Rng(7);
    const counts = new Array<number>(examples.length).fill(0);
    const ends = new Array<number>(examples.length).fill(0);
    const N = 60_000;
    let outside = 0;
    for (let n = 0; n < N; n++) {
      const t = drawTarget(corpus, rng);
      counts[t.example] += 1;
      const end = corpus.starts[t.example + 1];
      if (t.pos < corpus.completionStarts[t.example] || t.pos > end) outside += 1;
      if (t.pos === end) ends[t.example] += 1;
    }
    expect(outside).toBe(0);
    expect(counts[2]).toBe(0); // weight 0
    expect(counts[3]).toBe(0); // no completion to learn
    // In proportion to weight among the drawable (1 : 3 : 2), whatever their lengths, within a few standard deviations.
    for (const [i, share] of [
      [0, 1 / 6],
      [1, 3 / 6],
      [4, 2 / 6],
    ]) {
      expect(Math.abs(counts[i] / N - share)).toBeLessThan(0.01);
    }
    // The end of each completion is one target among its bytes + 1: "xy" → a third, "z" → a half.
    expect(Math.abs(ends[0] / counts[0] - 1 / 3)).toBeLessThan(0.02);
    expect(Math.abs(ends[1] / counts[1] - 1 / 2)).toBeLessThan(0.02);
  });

  test('a long and a short example of equal weight are drawn equally often: the weight is per example, not per byte', () => {
    const c = corpusOf([
      { prompt: 'A=', completion: 'x', weight: 1 },
      { prompt: 'B=', completion: 'y'.repeat(99), weight: 1 },
      { prompt: 'C=', completion: 'z'.repeat(9), weight: 2 },
    ]);
    const rng = new Rng(5);
    const counts = [0, 0, 0];
    const N = 40_000;
    for (let n = 0; n < N; n++) counts[drawTarget(c, rng).example] += 1;
    // Shares 1/4, 1/4, 1/2 (by bytes + 1 they were 2/122, 100/122 and 20/122); 0.01 is over 4 standard deviations.
    expect(Math.abs(counts[0] / N - 1 / 4)).toBeLessThan(0.01);
    expect(Math.abs(counts[1] / N - 1 / 4)).toBeLessThan(0.01);
    expect(Math.abs(counts[2] / N - 1 / 2)).toBeLessThan(0.01);
  });

  test("a window's target is a completion byte or BOS (the end), its context the example's own bytes, BOS before its start", () => {
    const rng = new Rng(11);
    const contexts = new Int32Array(C);
    const targets = new Int32Array(1);
    const lower = new Set(encodeText('abcdefghijklmnopqrstuvwxyz'));
    const wrong: string[] = [];
    for (let n = 0; n < 5000; n++) {
      const t = drawTarget(corpus, rng);
      fillExampleWindow(corpus, t, C, C, contexts, targets, 0);
      const e = examples[t.example];
      const atEnd = t.pos === corpus.starts[t.example + 1];
      if (atEnd ? targets[0] !== BOS_ID : !lower.has(targets[0])) wrong.push(`target ${targets[0]} of ${JSON.stringify(t)}`);
      const seq = [BOS_ID, BOS_ID, BOS_ID, BOS_ID, ...encodeText(e.prompt + e.completion)];
      const at = t.pos - corpus.starts[t.example] + C; // the target's index in seq
      if (seq.slice(at - C, at).join() !== Array.from(contexts).join())
        wrong.push(`context ${Array.from(contexts).join()} of ${JSON.stringify(t)}`);
    }
    expect(wrong).toEqual([]);
    // A short context keeps only the `keep` most recent bytes.
    fillExampleWindow(corpus, { example: 1, pos: corpus.completionStarts[1] }, C, 2, contexts, targets, 0);
    expect(Array.from(contexts)).toEqual([BOS_ID, BOS_ID, ...encodeText('G=')]);
  });

  test('a dataset where nothing can be drawn is refused', () => {
    expect(() => corpusOf([{ prompt: 'a', completion: 'b', weight: 0 }])).toThrow(
      /none of the dataset's 1 examples has both a weight above 0/,
    );
    expect(() => corpusOf([])).toThrow(/no examples/);
  });
});

describe('training on examples', () => {
  const { train, heldOut } = copyTask();

  test('completion loss falls and predict answers held-out prompts that the untrained model cannot', () => {
    const dataset = writeVersion(path.join(scratch, 'copy'), asTrainExamples(train));
    const trained = writeRunJson(
      path.join(scratch, 'copy-trained'),
      dataset,
      { ...SMALL, steps: 200, logEvery: 20 },
      { checkpointEvery: 200 },
    );
    const untrained = writeRunJson(path.join(scratch, 'copy-untrained'), dataset, { ...SMALL, steps: 0 });
    for (const dir of [trained, untrained]) {
      const r = trainer(['train', '--run-dir', dir]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    }
    const lines = readMetrics(trained);
    expect(lines.map((l) => l.step)).toEqual(Array.from({ length: 10 }, (_, i) => (i + 1) * 20));
    // Bits per completion byte: near log2(99) untrained; the rule is learnt, so it ends far lower.
    expect(lines[0].loss).toBeGreaterThan(lines[lines.length - 1].loss + 1);

    const prompts = writePrompts(path.join(scratch, 'held-out.jsonl'), heldOut);
    const share = (dir: string, step: number) => {
      const out = path.join(dir, 'predictions.jsonl');
      const r = trainer(['predict', '--checkpoint', path.join(dir, 'checkpoints', `step-${step}.bin`), '--prompts', prompts, '--out', out]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      return exactShare(out, heldOut);
    };
    const before = share(untrained, 0);
    const after = share(trained, 200);
    // Exact answers: the completion is the digit and its newline, then predict stops (the end is learnt).
    expect(after).toBeGreaterThan(before + 0.5);
  });

  test('an example of weight 0 is never learnt; the same example of weight above 0 is', () => {
    const odd = { prompt: '!k=', completion: '@\n', category: 'general', weight: 0, source: 'base' };
    const predictFor = (weight: number) => {
      const b = new ExampleCorpusBuilder();
      for (const e of [...asTrainExamples(train), { ...odd, weight }]) b.add(e);
      const { model } = trainCharLm({ examples: b.finish(), params: { ...SMALL, steps: 200 }, seed: 2 });
      return greedyComplete(model, odd.prompt, 4);
    };
    expect(predictFor(20)).toBe('@\n');
    expect(predictFor(0)).not.toContain('@');
  });

  test('a resumed run is bit-for-bit the uninterrupted one', () => {
    const b = new ExampleCorpusBuilder();
    asTrainExamples(train).forEach((e, i) => b.add({ ...e, weight: 1 + (i % 3) }));
    const examples = b.finish();
    const params = { ...SMALL, steps: 60, batchSize: 6, logEvery: 10 };
    const full: CharLmCheckpoint[] = [];
    const fullLines: MetricLine[] = [];
    const whole = trainCharLm({
      examples,
      params,
      seed: 9,
      checkpointEvery: 20,
      onCheckpoint: (c) => full.push(c),
      onMetrics: (l) => fullLines.push(l),
    });
    const resume = decodeCheckpoint(encodeCheckpoint(full[1]));
    const resumedLines: MetricLine[] = [];
    const resumed = trainCharLm({ examples, params, seed: 9, resume, onMetrics: (l) => resumedLines.push(l) });
    expect(Buffer.from(encodeCheckpoint(resumed.checkpoint)).equals(Buffer.from(encodeCheckpoint(whole.checkpoint)))).toBe(true);
    expect(resumedLines.map((l) => [l.step, l.loss])).toEqual(fullLines.filter((l) => l.step > 40).map((l) => [l.step, l.loss]));
  });
});

describe('the train command on a dataset version', () => {
  const run = (name: string, lines: unknown[], over: { examplesFile?: string | null; trainFile?: string } = {}) => {
    const dataset = writeVersion(path.join(scratch, `${name}-data`), lines as TrainExample[]);
    if (over.examplesFile === null) delete dataset.examplesFile;
    if (over.trainFile) dataset.trainFile = over.trainFile;
    const dir = writeRunJson(path.join(scratch, name), dataset, { ...SMALL, steps: 20, logEvery: 10 });
    return { dir, dataset, r: trainer(['train', '--run-dir', dir]) };
  };

  test('reads train.jsonl (chat lines too) and not train.txt when run.json names it', () => {
    const lines = [
      { prompt: 'a1=', completion: '1\n', category: 'c', weight: 1, source: 'base' },
      {
        messages: [
          { role: 'user', content: 'b2=' },
          { role: 'assistant', content: '2\n' },
        ],
        category: 'c',
        weight: 2,
        source: 'critique',
      },
    ];
    const { dir, r } = run('reads-jsonl', lines, { trainFile: '/nonexistent/train.txt' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readMetrics(dir).map((l) => l.step)).toEqual([10, 20]);
  });

  test('a version without train.jsonl trains on train.txt as before', () => {
    const { dir, r } = run('text-only', asTrainExamples(copyTask().train), { examplesFile: null });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readMetrics(dir).map((l) => l.step)).toEqual([10, 20]);
  });

  test('every weight 0, or a bad line, fails with one line naming the file, and writes nothing', () => {
    const zero = run('all-zero', [{ prompt: 'a', completion: 'b', category: 'c', weight: 0, source: 'base' }]);
    expect(zero.r.status).toBe(1);
    expect(zero.r.stderr).toBe(
      `charlm: ${zero.dataset.examplesFile}: none of the dataset's 1 examples has both a weight above 0 and a completion to learn\n`,
    );
    expect(fs.existsSync(path.join(zero.dir, 'metrics.jsonl'))).toBe(false);

    const bad = run('bad-line', [
      { prompt: 'a', completion: 'b', category: 'c', weight: 1, source: 'base' },
      { prompt: 'a', weight: 1 },
    ]);
    expect(bad.r.status).toBe(1);
    expect(bad.r.stderr).toBe(`charlm: ${bad.dataset.examplesFile}:2: completion: Invalid input: expected string, received undefined\n`);
    expect(fs.existsSync(path.join(bad.dir, 'metrics.jsonl'))).toBe(false);
  });
});
