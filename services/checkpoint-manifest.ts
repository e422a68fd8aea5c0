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

/** Throws ChecksumMismatchError when the file's bytes are not the ones the manifest promised. */
export function verifyCheckpoint(file: string, sha256: string, what: string): void {
  if (!fs.existsSync(file)) throw new ChecksumMismatchError(`${what}: checkpoint file ${file} is missing`);
  const actual = sha256File(file);
  if (actual !== sha256)
    throw new ChecksumMismatchError(`${what}: ${file} has sha256 ${actual.slice(0, 12)}…, manifest says ${sha256.slice(0, 12)}…`);
}
