// `train --run-dir DIR`: trains the built-in model as run.json says, streaming metrics and checkpoints
// into the run directory, and resumes from the newest checkpoint of the manifest when restarted there.
// It reads run.json and the dataset version only (its examples, train.jsonl, when run.json names them; else its
// training text, train.txt): never an eval file.
import fs from 'node:fs';
import path from 'node:path';
import { decodeCheckpoint, encodeCheckpoint, CheckpointFormatError, type CharLmCheckpoint } from '../../formats/charlm/model';
import { InvalidTrainParamsError, resolveTrainParams, trainCharLm } from './train';
import { RUN_JSON } from '../../core/contract-files';
import type { RunJson } from '../../core/job-contract';
import { MetricsWriter, TrainerError, loadNewestCheckpoint, readRunJson, saveCheckpoint } from './run-files';
import { readExampleCorpus } from './read-examples';

export function trainCommand(runDir: string): void {
  const run = readRunJson(runDir);
  let steps: number;
  try {
    steps = resolveTrainParams(run.params).steps;
  } catch (err) {
    if (err instanceof InvalidTrainParamsError) throw new TrainerError(`${RUN_JSON}: ${err.message}`);
    throw err;
  }
  const resume = readCheckpoint(() => loadNewestCheckpoint(runDir)?.bytes ?? null, 'the newest checkpoint');
  if (resume && resume.step >= steps) return; // already finished: a relaunch after the last checkpoint is a no-op
  const base =
    resume || !run.baseCheckpoint ? null : readCheckpoint(() => readFile(path.resolve(runDir, run.baseCheckpoint!)), 'baseCheckpoint');
  const data = readTrainingData(runDir, run);

  const metrics = new MetricsWriter(runDir);
  try {
    trainCharLm({
      ...data,
      params: run.params,
      seed: run.seed,
      resume,
      base,
      checkpointEvery: run.checkpointEvery ?? 0,
      onMetrics: (line) => metrics.write(line),
      onCheckpoint: (c) => saveCheckpoint(runDir, c.step, encodeCheckpoint(c)),
    });
  } finally {
    metrics.close();
  }
}

/** The examples when run.json names them, else (versions written before train.jsonl) the training text. */
function readTrainingData(runDir: string, run: RunJson) {
  // Relative dataset paths are taken from the run directory, so the trainer's cwd does not matter.
  const { path: dir, examplesFile, trainFile } = run.dataset;
  if (examplesFile) return { examples: readExampleCorpus(path.resolve(runDir, dir, examplesFile)) };
  return { text: readFile(path.resolve(runDir, dir, trainFile)) };
}

function readFile(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new TrainerError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function readCheckpoint(read: () => Buffer | null, what: string): CharLmCheckpoint | null {
  const bytes = read();
  if (!bytes) return null;
  try {
    return decodeCheckpoint(bytes);
  } catch (err) {
    if (err instanceof CheckpointFormatError) throw new TrainerError(`${what}: ${err.message}`);
    throw err;
  }
}
