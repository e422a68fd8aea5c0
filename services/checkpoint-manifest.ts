// Reads and verifies a run's checkpoint manifest (the job contract's checkpoints/manifest.json).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ChecksumMismatchError, ContractViolationError } from '../core/errors';
import { MANIFEST_FILE, type CheckpointEntry, type CheckpointManifest } from '../core/job-contract';

export function readManifest(runDir: string): CheckpointEntry[] {
  const file = path.join(runDir, MANIFEST_FILE);
  let parsed: CheckpointManifest;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as CheckpointManifest;
  } catch (e) {
    throw new ContractViolationError(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'not valid JSON'}`);
  }
  if (!parsed || !Array.isArray(parsed.checkpoints)) throw new ContractViolationError(`${file}: no "checkpoints" array`);
  for (const [i, c] of parsed.checkpoints.entries()) {
    if (typeof c.path !== 'string' || typeof c.sha256 !== 'string' || !Number.isInteger(c.step) || typeof c.format !== 'string') {
      throw new ContractViolationError(`${file}: checkpoints[${i}] needs path, sha256, step and format`);
    }
  }
  return [...parsed.checkpoints].sort((a, b) => a.step - b.step);
}

export function sha256File(file: string): string {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(1 << 20);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}

/**
 * A checkpoint folder's digest (a Hugging Face model folder, say): sha256 over `<relative path>\t<file sha256>\n`
 * for every regular file under it, sorted by relative path ('/'-separated, byte order). Any added, removed, renamed
 * or changed file changes it. A symlink or anything but files and folders is refused: a frozen checkpoint is bytes.
 * trainers/hf/manifest.py computes the same.
 */
export function sha256Folder(dir: string): { sha256: string; files: Record<string, string> } {
  const files: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) files[r] = sha256File(path.join(dir, r));
      else throw new ChecksumMismatchError(`${path.join(dir, r)}: a checkpoint folder holds files and folders only`);
    }
  };
  walk('');
  const names = Object.keys(files).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const h = crypto.createHash('sha256');
  for (const n of names) h.update(`${n}\t${files[n]}\n`);
  return { sha256: h.digest('hex'), files: Object.fromEntries(names.map((n) => [n, files[n]])) };
}

/** sha256 of a checkpoint file's bytes, or a checkpoint folder's digest (sha256Folder). */
export function sha256Checkpoint(p: string): string {
  return fs.statSync(p).isDirectory() ? sha256Folder(p).sha256 : sha256File(p);
}

/** Throws ChecksumMismatchError when the checkpoint's bytes (a file, or every file of a folder) are not the ones the manifest promised. */
export function verifyCheckpoint(file: string, sha256: string, what: string): void {
  if (!fs.existsSync(file)) throw new ChecksumMismatchError(`${what}: checkpoint file ${file} is missing`);
  const actual = sha256Checkpoint(file);
  if (actual !== sha256)
    throw new ChecksumMismatchError(`${what}: ${file} has sha256 ${actual.slice(0, 12)}…, manifest says ${sha256.slice(0, 12)}…`);
}
