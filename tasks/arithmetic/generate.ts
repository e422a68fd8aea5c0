// The arithmetic task's files, from one seed: `train.jsonl` (what `flywheel dataset add` registers) and `suite.json`
// (what `flywheel suite add` registers). No held-out, test or public problem, nor any twin, is a training problem.
// As a command: tasks/arithmetic/main.ts.
import fs from 'node:fs';
import path from 'node:path';
import { categoryOf, completionOf, promptOf } from './problems';
import { splitProblems, type SplitSizes } from './split';
import {
  canaryItem,
  canaryStrings,
  cheatOnlyItems,
  heldoutCanaryItem,
  heldoutCanaryStrings,
  problemItem,
  twinItem,
  type ArithmeticItem,
} from './probes';

/** The suite's name, and the dataset's name in the campaign spec (tasks/arithmetic/arithmetic.yaml). */
export const ARITHMETIC_NAME = 'arithmetic';
export const DEFAULT_SEED = 1;

export interface TrainLine {
  prompt: string;
  completion: string;
  category: string;
}

export interface ArithmeticSuite {
  name: string;
  canaries: string[];
  heldoutCanaries: string[];
  items: ArithmeticItem[];
}

export interface ArithmeticTask {
  train: TrainLine[];
  suite: ArithmeticSuite;
}

const pad = (k: number) => String(k).padStart(3, '0');

export function generateArithmetic(seed: number = DEFAULT_SEED, sizes: SplitSizes = {}): ArithmeticTask {
  const s = splitProblems(seed, sizes);
  const pub = s.public.map((p, k) => problemItem(`public-${pad(k)}`, 'public', p));
  const heldout = s.heldout.map((p, k) => problemItem(`heldout-${pad(k)}`, 'heldout', p));
  const test = s.test.map((p, k) => problemItem(`test-${pad(k)}`, 'test', p));
  const canaries = canaryStrings(seed, 2);
  const heldoutCanaries = heldoutCanaryStrings(seed, heldout, 2);
  const items = [
    ...pub,
    ...heldout,
    ...heldoutCanaries.map(heldoutCanaryItem),
    ...pub.map((item, k) => twinItem(item, s.twins[k])),
    ...canaries.map(canaryItem),
    ...cheatOnlyItems(),
    // Last: the items before them are what they were before the suite had a test split.
    ...test,
  ];
  const train = s.train.map((p) => ({ prompt: promptOf(p), completion: completionOf(p), category: categoryOf(p) }));
  return { train, suite: { name: ARITHMETIC_NAME, canaries, heldoutCanaries, items } };
}

export interface ArithmeticFiles {
  trainFile: string;
  suiteFile: string;
  trainLines: number;
  suiteItems: number;
}

/** Writes `train.jsonl` and `suite.json` into `dir` (created if missing). */
export function writeArithmeticFiles(dir: string, seed: number = DEFAULT_SEED, sizes: SplitSizes = {}): ArithmeticFiles {
  const t = generateArithmetic(seed, sizes);
  fs.mkdirSync(dir, { recursive: true });
  const trainFile = path.join(dir, 'train.jsonl');
  const suiteFile = path.join(dir, 'suite.json');
  fs.writeFileSync(trainFile, t.train.map((l) => JSON.stringify(l) + '\n').join(''));
  fs.writeFileSync(suiteFile, JSON.stringify(t.suite, null, 2) + '\n');
  return { trainFile, suiteFile, trainLines: t.train.length, suiteItems: t.suite.items.length };
}
