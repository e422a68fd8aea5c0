// Runs a trainer's `predict` entry on a frozen checkpoint, in a scratch folder of the eval activity, and
// checks that the predictions answer exactly the prompts given: one each, no more, no fewer.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PREDICTIONS_FILE, PROMPTS_FILE } from '../../core/contract-files';
import { ContractViolationError, PredictionsMismatchError } from '../../core/errors';
import type { Prediction, PredictPrompt } from '../../core/job-contract';
import { predictScratchRoot } from '../../services/paths';
import { readConfined } from '../../services/run-files';
import { isolatedEntry, type TrainerSetup } from '../training/trainer-isolation';

export interface PredictOptions {
  /** The campaign's trainer and what its sandbox hides (trainerSetupOf). */
  trainer: TrainerSetup;
  /** A checkpoint file or folder: the only thing of FLYWHEEL_HOME that predict sees, read-only. */
  checkpointFile: string;
  prompts: PredictPrompt[];
  /** @default 300000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Answers the prompts in a scratch folder of the eval activity's own (outside FLYWHEEL_HOME, mode 0700), which is
 * removed when predict ends: held-out prompts exist on disk only while they are being answered.
 */
export async function runPredict(opts: PredictOptions): Promise<Map<string, string>> {
  const workDir = fs.mkdtempSync(path.join(predictScratchRoot(), 'p-'));
  try {
    const promptsFile = path.join(workDir, PROMPTS_FILE);
    const outFile = path.join(workDir, PREDICTIONS_FILE);
    writePrompts(promptsFile, opts.prompts);
    const args = ['--checkpoint', opts.checkpointFile, '--prompts', promptsFile, '--out', outFile];
    const [cmd, ...rest] = isolatedEntry(opts.trainer, 'predict', args, {
      cwd: workDir,
      data: [opts.checkpointFile],
      readWrite: [workDir],
    }).argv;
    await new Promise<void>((resolve, reject) => {
      execFile(
        cmd,
        rest,
        { cwd: workDir, env: {}, timeout: opts.timeoutMs ?? 300_000, maxBuffer: 16 << 20, signal: opts.signal },
        (err, _out, stderr) => {
          if (err)
            reject(new Error(`predict failed (${err.killed ? 'killed at its time limit' : `exit ${err.code}`}): ${stderrTail(stderr)}`));
          else resolve();
        },
      );
    });
    return readPredictions(outFile, opts.prompts);
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/** A failed predict's last three stderr lines, as one line: what its error message carries. */
export function stderrTail(stderr: string): string {
  return stderr.trim().split('\n').slice(-3).join(' | ');
}

/** The prompts file predict reads: one PredictPrompt a line. */
export function writePrompts(file: string, prompts: PredictPrompt[]): void {
  fs.writeFileSync(file, prompts.map((p) => JSON.stringify(p)).join('\n') + '\n');
}

/**
 * The most bytes a predictions file may hold for `prompts`: 64 MiB, plus for each prompt its budget JSON-escaped at
 * worst (6 bytes a byte, as `\u0000`), its id and 4 KiB of room. Room enough for a predict that writes past its budget
 * (what it wrote past is cut before grading), never an unbounded read: a larger file is refused before it is read.
 */
export function predictionsCap(prompts: PredictPrompt[]): number {
  return 64 * 1024 * 1024 + prompts.reduce((n, p) => n + 6 * (p.maxBytes + Buffer.byteLength(p.id)) + 4096, 0);
}

/**
 * predict's answers, read from its own scratch folder, which predict could write anything into: confined there
 * (services/run-files.ts: no link, no FIFO, a regular file under predictionsCap), then checked line by line.
 */
export function readPredictions(file: string, prompts: PredictPrompt[]): Map<string, string> {
  let bytes: Buffer | undefined;
  try {
    bytes = readConfined(path.dirname(file), path.basename(file), { maxBytes: predictionsCap(prompts), what: 'predictions' });
  } catch (e) {
    if (e instanceof ContractViolationError) throw new PredictionsMismatchError(e.message);
    throw e;
  }
  if (bytes === undefined) throw new PredictionsMismatchError(`predict wrote no predictions file at ${file}`);
  const wanted = new Set(prompts.map((p) => p.id));
  const out = new Map<string, string>();
  const lines = bytes.toString('utf8').split('\n');
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue;
    let p: Prediction;
    try {
      p = JSON.parse(line) as Prediction;
    } catch {
      throw new PredictionsMismatchError(`${file}:${i + 1}: not valid JSON`);
    }
    if (typeof p?.id !== 'string' || typeof p.completion !== 'string')
      throw new PredictionsMismatchError(`${file}:${i + 1}: needs string "id" and "completion"`);
    if (!wanted.has(p.id)) throw new PredictionsMismatchError(`${file}:${i + 1}: "${p.id}" is not one of the prompts given`);
    if (out.has(p.id)) throw new PredictionsMismatchError(`${file}:${i + 1}: "${p.id}" answered twice`);
    out.set(p.id, p.completion);
  }
  const missing = [...wanted].filter((id) => !out.has(id));
  if (missing.length) throw new PredictionsMismatchError(`${file}: ${missing.length} prompts unanswered (first: ${missing[0]})`);
  return out;
}
