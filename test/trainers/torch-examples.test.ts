// The reference PyTorch trainer on a dataset version's examples (run.json `dataset.examplesFile`): it renders chat
// lines exactly as core/dataset/example-line.ts does; its windows count only completion targets and never draw an
// example of weight 0; an example is drawn by its weight and each window is one example's mean in the loss; on a task made here it learns to answer held-out prompts the untrained model cannot; a run
// resumed on the examples path reaches the uninterrupted run's weights; a dataset that cannot train fails in one line.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckpointManifest, MetricLine } from '../../core/job-contract';
import { promptAndCompletion, type ExampleLine, type TrainExample } from '../../core/dataset/example-line';
import { requires } from '../helpers/requires';
import { torchPathVar } from '../helpers/torch-python';
import { asTrainExamples, copyTask, exactShare, writePrompts, writeRunJson, writeVersion } from './copy-task';

requires('torch');

const REPO = path.join(__dirname, '..', '..');
const TORCH_DIR = path.join(REPO, 'trainers', 'torch');
const MAIN = path.join(TORCH_DIR, 'main.py');
const ENV = { ...process.env, PATH: torchPathVar(), FLYWHEEL_TORCH_THREADS: '1', OMP_NUM_THREADS: '1' };
const TINY = { n_layer: 1, n_head: 2, d_model: 32, context: 8, batchSize: 16, lr: 0.01 };

const trainer = (args: string[]) => spawnSync('python3', [MAIN, ...args], { encoding: 'utf8', timeout: 120_000, env: ENV });
const readMetrics = (dir: string): MetricLine[] =>
  fs
    .readFileSync(path.join(dir, 'metrics.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as MetricLine);

/** Runs a Python program with trainers/torch importable (argv after the program) and parses its stdout as JSON. */
function python(program: string, args: string[] = [], input?: string): unknown {
  const r = spawnSync('python3', ['-c', `import json, sys\nsys.path.insert(0, ${JSON.stringify(TORCH_DIR)})\n${program}`, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: ENV,
    input,
  });
  if (r.status !== 0) throw new Error(`python failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

let scratch: string;
beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'torch-examples-'));
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

test('the Python trainer renders prompt/completion and chat lines exactly as promptAndCompletion does', () => {
  const lines: ExampleLine[] = [
    { prompt: 'a1=', completion: '1\n', category: 'c', weight: 1 },
    {
      messages: [
        { role: 'system', content: 'Add the numbers.' },
        { role: 'user', content: '12+30=' },
        { role: 'assistant', content: '42' },
        { role: 'user', content: 'and 1+1= ? «é»' },
        { role: 'assistant', content: 'deux\nlines: 2' },
      ],
      category: 'c',
      weight: 2,
    },
    { messages: [{ role: 'assistant', content: 'alone' }], category: 'c', weight: 1 },
  ];
  const rendered = python(
    'from examples import prompt_and_completion\nprint(json.dumps([list(prompt_and_completion(json.loads(l))) for l in sys.stdin if l.strip()]))',
    [],
    lines.map((l) => JSON.stringify(l)).join('\n'),
  );
  expect(rendered).toEqual(lines.map((l) => Object.values(promptAndCompletion(l))));
  expect((rendered as string[][])[1][0]).toBe('system: Add the numbers.\nuser: 12+30=\nassistant: 42\nuser: and 1+1= ? «é»\nassistant: ');
});

test('windows count only completion targets (and the end), never a prompt byte, and never draw a weight-0 example', () => {
  // Prompts upper case, completions lower case: a counted target's case says where it came from.
  const lines = [
    { prompt: 'AB=', completion: 'xy', category: 'c', weight: 1, source: 's' },
    { prompt: 'CD=', completion: 'q', category: 'c', weight: 0, source: 's' },
    {
      messages: [
        { role: 'user', content: 'EF' },
        { role: 'assistant', content: 'zz' },
      ],
      category: 'c',
      weight: 2,
      source: 's',
    },
    { prompt: 'GHIJKLMNOPQRSTU=', completion: 'uvwrst', category: 'c', weight: 1, source: 's' },
  ];
  const file = path.join(scratch, 'windows.jsonl');
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const r = python(
    `from data import ExampleWindows, data_generator
from model import BOS, IGNORE
w = ExampleWindows(sys.argv[1])
x, y = w.sample(4000, 8, data_generator(3, 0))
counted = y[y != IGNORE]
print(json.dumps({'shape': list(x.shape), 'targets': sorted(set(counted.tolist())), 'bos': BOS,
                  'rows_without_target': int(((y != IGNORE).sum(1) == 0).sum()),
                  'inputs': sorted(set(x.flatten().tolist()))}))`,
    [file],
  ) as { shape: number[]; targets: number[]; bos: number; rows_without_target: number; inputs: number[] };
  expect(r.shape).toEqual([4000, 8]);
  expect(r.rows_without_target).toBe(0);
  // Completion bytes of the drawable examples and the end (BOS); no "q" (weight 0), no prompt byte.
  const completionBytes = [...Buffer.from('xyzuvwrst')].sort((a, b) => a - b);
  expect(r.targets).toEqual([...new Set(completionBytes)].concat(r.bos));
  // The weight-0 example's bytes never appear in a window at all.
  for (const ch of 'CDq') expect(r.inputs).not.toContain(ch.charCodeAt(0));
});

test('an example weighs per example: a long and a short one of equal weight are drawn equally often, and each window is one example in the loss', () => {
  const lines = [
    { prompt: 'A=', completion: 'x', category: 'c', weight: 1, source: 's' },
    { prompt: 'B=', completion: 'y'.repeat(99), category: 'c', weight: 1, source: 's' },
    { prompt: 'C=', completion: 'z'.repeat(9), category: 'c', weight: 2, source: 's' },
  ];
  const file = path.join(scratch, 'per-example.jsonl');
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const r = python(
    `import torch
from data import ExampleWindows, data_generator
from model import IGNORE, VOCAB, window_loss
w = ExampleWindows(sys.argv[1])
ex = w.draw(40000, data_generator(5, 0))
shares = [float((ex == i).double().mean()) for i in range(3)]
# Two windows: one counted target of loss log(VOCAB) (uniform logits), and seven of loss about 0 (a confident logit).
logits = torch.zeros(2, 8, VOCAB)
logits[1, :, 65] = 50.0
targets = torch.full((2, 8), IGNORE)
targets[0, 7] = 66
targets[1, 1:] = 65
print(json.dumps({'shares': shares, 'loss': float(window_loss(logits, targets)), 'uniform': float(torch.log(torch.tensor(float(VOCAB))))}))`,
    [file],
  ) as { shares: number[]; loss: number; uniform: number };
  // Shares 1/4, 1/4, 1/2 by weight (by completion bytes + 1 they were 2/122, 100/122, 20/122); 0.01 is over 4 sd.
  for (const [i, share] of [1 / 4, 1 / 4, 1 / 2].entries()) expect(Math.abs(r.shares[i] - share)).toBeLessThan(0.01);
  // The mean of the two windows' own means (half of log 257), not the mean over their eight targets (an eighth).
  expect(r.loss).toBeCloseTo(r.uniform / 2, 4);
});

describe('training on the copy task', () => {
  const { train, heldOut } = copyTask();
  let dataset: ReturnType<typeof writeVersion>;
  beforeAll(() => {
    dataset = writeVersion(path.join(scratch, 'copy'), asTrainExamples(train));
  });

  test('completion loss falls and predict answers held-out prompts that the untrained model cannot', () => {
    const trained = writeRunJson(path.join(scratch, 'trained'), dataset, { ...TINY, steps: 150, logEvery: 25 });
    const untrained = writeRunJson(path.join(scratch, 'untrained'), dataset, { ...TINY, steps: 0 });
    for (const dir of [trained, untrained]) {
      const r = trainer(['train', '--run-dir', dir]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    }
    const lines = readMetrics(trained);
    expect(lines.map((l) => l.step)).toEqual([25, 50, 75, 100, 125, 150]);
    expect(lines[lines.length - 1].loss).toBeLessThan(lines[0].loss - 1);

    const prompts = writePrompts(path.join(scratch, 'held-out.jsonl'), heldOut);
    const share = (dir: string, step: number) => {
      const out = path.join(dir, 'predictions.jsonl');
      const r = trainer(['predict', '--checkpoint', path.join(dir, 'checkpoints', `step-${step}.pt`), '--prompts', prompts, '--out', out]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      return exactShare(out, heldOut);
    };
    expect(share(trained, 150)).toBeGreaterThan(share(untrained, 0) + 0.5);
  });

  test('a run resumed from a checkpoint on the examples path reaches the uninterrupted run weights', () => {
    const params = { ...TINY, steps: 40, logEvery: 10 };
    const whole = writeRunJson(path.join(scratch, 'whole'), dataset, params, { checkpointEvery: 20 });
    expect(trainer(['train', '--run-dir', whole]).status).toBe(0);
    // The same run stopped after its step-20 checkpoint: that checkpoint alone, and the metrics up to it.
    const cut = writeRunJson(path.join(scratch, 'cut'), dataset, params, { checkpointEvery: 20 });
    fs.cpSync(path.join(whole, 'checkpoints'), path.join(cut, 'checkpoints'), { recursive: true });
    fs.rmSync(path.join(cut, 'checkpoints', 'step-40.pt'));
    const manifestFile = path.join(cut, 'checkpoints', 'manifest.json');
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as CheckpointManifest;
    fs.writeFileSync(manifestFile, JSON.stringify({ checkpoints: manifest.checkpoints.filter((c) => c.step === 20) }));
    const r = trainer(['train', '--run-dir', cut]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readMetrics(cut).map((l) => l.step)).toEqual([30, 40]);

    const same = python(
      `import torch
a, b = (torch.load(f, weights_only=True) for f in sys.argv[1:])
ta = list(a['model'].values()) + [t for s in a['optimizer']['state'].values() for t in s.values()]
tb = list(b['model'].values()) + [t for s in b['optimizer']['state'].values() for t in s.values()]
print(json.dumps({'tensors': len(ta), 'equal': len(ta) == len(tb) and all(torch.equal(x, y) for x, y in zip(ta, tb))}))`,
      [path.join(whole, 'checkpoints', 'step-40.pt'), path.join(cut, 'checkpoints', 'step-40.pt')],
    ) as { tensors: number; equal: boolean };
    expect(same.tensors).toBeGreaterThan(10);
    expect(same.equal).toBe(true);
    const loss = (ls: MetricLine[]) => ls.filter((l) => l.step > 20).map((l) => [l.step, l.loss]);
    expect(loss(readMetrics(cut))).toEqual(loss(readMetrics(whole)));
  });

  test('every weight 0, or a bad line, fails with one line naming the file, and writes nothing', () => {
    const fail = (name: string, lines: unknown[]) => {
      const ds = writeVersion(path.join(scratch, `${name}-data`), lines as TrainExample[]);
      const dir = writeRunJson(path.join(scratch, name), ds, { ...TINY, steps: 10 });
      const r = trainer(['train', '--run-dir', dir]);
      expect(r.status).toBe(1);
      expect(fs.existsSync(path.join(dir, 'metrics.jsonl'))).toBe(false);
      return { stderr: r.stderr, file: ds.examplesFile };
    };
    const zero = fail('all-zero', [{ prompt: 'a', completion: 'b', category: 'c', weight: 0, source: 'base' }]);
    expect(zero.stderr).toBe(`torch-trainer: ${zero.file} has 1 examples, none with both a weight above 0 and a completion\n`);
    const bad = fail('bad-line', [
      { prompt: 'a', completion: 'b', weight: 1 },
      { prompt: 'a', weight: 1 },
    ]);
    expect(bad.stderr).toBe(`torch-trainer: ${bad.file}:2: completion: must be a string\n`);
  });
});
