// The run directory of the training-job contract, as the built-in trainer writes it: run.json in,
// metrics.jsonl appended one whole line per write, checkpoints written to a temporary name and renamed,
// and a manifest rewritten atomically, so a reader or a restarted trainer never sees half a file.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CHECKPOINTS_DIR, MANIFEST_FILE, METRICS_FILE, RUN_JSON } from '../../core/contract-files';
import type { CheckpointManifest, MetricLine, RunJson } from '../../core/job-contract';
import { CHARLM_FORMAT } from '../../formats/charlm/model';
import { NonRetryableError } from '../../core/errors';

/** A problem the trainer reports as one `charlm: ...` line on stderr, exiting 1. */
export class TrainerError extends NonRetryableError {}

export function readRunJson(runDir: string): RunJson {
  const file = path.join(runDir, RUN_JSON);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    throw new TrainerError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const r = raw as Partial<RunJson> | null;
  if (!r || typeof r !== 'object') invalid('must be a JSON object');
  if (!r.params || typeof r.params !== 'object' || Array.isArray(r.params)) invalid('params must be an object');
  if (typeof r.seed !== 'number' || !Number.isInteger(r.seed)) invalid('seed must be an integer');
  if (!r.dataset || typeof r.dataset.path !== 'string' || typeof r.dataset.trainFile !== 'string') {
    invalid('dataset.path and dataset.trainFile must be strings');
  }
  if (r.dataset.examplesFile !== undefined && typeof r.dataset.examplesFile !== 'string') {
    invalid('dataset.examplesFile must be a string when given');
  }
  if (r.baseCheckpoint != null && typeof r.baseCheckpoint !== 'string') invalid('baseCheckpoint must be a path or null');
  const every = r.checkpointEvery;
  if (every !== undefined && (typeof every !== 'number' || !Number.isInteger(every) || every < 0)) {
    invalid('checkpointEvery must be a non-negative integer');
  }
  return r as RunJson;
}

function invalid(what: string): never {
  throw new TrainerError(`${RUN_JSON}: ${what}`);
}

/** Appends metric lines, each with one write() so a concurrent reader sees whole lines. */
export class MetricsWriter {
  private readonly fd: number;

  constructor(runDir: string) {
    const file = path.join(runDir, METRICS_FILE);
    this.fd = fs.openSync(file, 'a');
    // A crash mid-line leaves a fragment; start on a fresh line so every later line parses.
    const size = fs.fstatSync(this.fd).size;
    if (size > 0) {
      const last = Buffer.alloc(1);
      const rfd = fs.openSync(file, 'r');
      fs.readSync(rfd, last, 0, 1, size - 1);
      fs.closeSync(rfd);
      if (last[0] !== 0x0a) fs.writeSync(this.fd, '\n');
    }
  }

  write(line: MetricLine): void {
    fs.writeSync(this.fd, JSON.stringify(line) + '\n');
  }

  close(): void {
    fs.closeSync(this.fd);
  }
}

export function sha256(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** Writes `data` to `file` by way of a temporary file and a rename (atomic on one filesystem). */
export function writeAtomic(file: string, data: string | Buffer): void {
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

export function readManifest(runDir: string): CheckpointManifest {
  const file = path.join(runDir, MANIFEST_FILE);
  if (!fs.existsSync(file)) return { checkpoints: [] };
  try {
    const m = JSON.parse(fs.readFileSync(file, 'utf8')) as CheckpointManifest;
    if (!Array.isArray(m.checkpoints)) throw new Error('no checkpoints array');
    return m;
  } catch (err) {
    throw new TrainerError(`${file} is unreadable: ${(err as Error).message}`);
  }
}

/** Writes checkpoints/step-N.bin, then the manifest listing it (so the manifest never names a missing file). */
export function saveCheckpoint(runDir: string, step: number, bytes: Buffer): void {
  const rel = `checkpoints/step-${step}.bin`;
  fs.mkdirSync(path.join(runDir, CHECKPOINTS_DIR), { recursive: true });
  writeAtomic(path.join(runDir, rel), bytes);
  const manifest = readManifest(runDir);
  const entries = manifest.checkpoints.filter((c) => c.step !== step);
  entries.push({ path: rel, sha256: sha256(bytes), step, format: CHARLM_FORMAT });
  entries.sort((a, b) => a.step - b.step);
  writeAtomic(path.join(runDir, MANIFEST_FILE), JSON.stringify({ checkpoints: entries }, null, 2) + '\n');
}

/** The newest checkpoint in the manifest, its bytes checked against the recorded sha256; null if none. */
export function loadNewestCheckpoint(runDir: string): { step: number; bytes: Buffer } | null {
  const entries = readManifest(runDir).checkpoints;
  if (entries.length === 0) return null;
  const newest = entries.reduce((a, b) => (b.step > a.step ? b : a));
  if (newest.format !== CHARLM_FORMAT)
    throw new TrainerError(`checkpoint ${newest.path} has format ${newest.format}, expected ${CHARLM_FORMAT}`);
  const bytes = fs.readFileSync(path.join(runDir, newest.path));
  if (sha256(bytes) !== newest.sha256) throw new TrainerError(`checkpoint ${newest.path} does not match its sha256 in the manifest`);
  return { step: newest.step, bytes };
}
