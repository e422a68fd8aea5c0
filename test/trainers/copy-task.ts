// A tiny prompt/completion task for the trainer tests, made here and not the built-in one: `<letter><digit>=` is
// answered `<digit>\n`. A fifth of the letter-digit pairs are held out of the training file, so answering them
// means the model learned the rule (copy the digit), not the lines. Written as a dataset version's train.jsonl.
import fs from 'node:fs';
import path from 'node:path';
import type { RunJson } from '../../core/job-contract';
import type { TrainExample } from '../../core/dataset/example-line';

export interface CopyItem {
  prompt: string;
  completion: string;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** Every item, split into the training lines and the held-out ones (no pair in both). */
export function copyTask(): { train: CopyItem[]; heldOut: CopyItem[] } {
  const train: CopyItem[] = [];
  const heldOut: CopyItem[] = [];
  [...LETTERS].forEach((letter, li) => {
    for (let d = 0; d < 10; d++) ((li + d) % 5 === 0 ? heldOut : train).push({ prompt: `${letter}${d}=`, completion: `${d}\n` });
  });
  return { train, heldOut };
}

/** As lines of a version's train.jsonl: category by digit parity, weight 1, source "base". */
export function asTrainExamples(items: CopyItem[]): TrainExample[] {
  return items.map((i) => ({ ...i, category: Number(i.completion) % 2 ? 'odd' : 'even', weight: 1, source: 'base' }));
}

/** Writes `<dir>/train.jsonl` (and `train.txt`, as a version has both) and returns run.json's `dataset`. */
export function writeVersion(dir: string, examples: TrainExample[]): RunJson['dataset'] {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'train.jsonl'), examples.map((e) => JSON.stringify(e)).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'train.txt'), examples.map((e) => ('prompt' in e ? e.prompt + e.completion : '')).join('\n'));
  return { versionId: 'copy@000000000000', path: dir, trainFile: path.join(dir, 'train.txt'), examplesFile: path.join(dir, 'train.jsonl') };
}

/** Writes `<dir>/run.json`. */
export function writeRunJson(
  dir: string,
  dataset: RunJson['dataset'],
  params: Record<string, unknown>,
  over: Partial<RunJson> = {},
): string {
  fs.mkdirSync(dir, { recursive: true });
  const run: RunJson = {
    runId: path.basename(dir),
    experimentId: path.basename(dir),
    recipe: 'test',
    params,
    seed: 5,
    dataset,
    baseCheckpoint: null,
    checkpointEvery: 0,
    ...over,
  };
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(run));
  return dir;
}

/** Writes a predict prompts file for `items` (ids i0, i1, …) and returns its path. */
export function writePrompts(file: string, items: CopyItem[], maxBytes = 8): string {
  fs.writeFileSync(file, items.map((it, i) => JSON.stringify({ id: `i${i}`, prompt: it.prompt, maxBytes })).join('\n') + '\n');
  return file;
}

/** The share of `items` whose prediction (predict's out file) is exactly the completion. */
export function exactShare(outFile: string, items: CopyItem[]): number {
  const got = new Map(
    fs
      .readFileSync(outFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: string; completion: string })
      .map((p) => [p.id, p.completion]),
  );
  return items.filter((it, i) => got.get(`i${i}`) === it.completion).length / items.length;
}
