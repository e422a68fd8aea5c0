// Reads and verifies a run's checkpoint manifest (the job contract's checkpoints/manifest.json). Both are the
// trainer's output, so every read is confined to the run directory (run-files.ts): a manifest path that climbs out
// (`..`, absolute) breaks the contract, and a checkpoint that is a link, a FIFO or a device is refused, never hashed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ChecksumMismatchError, ContractViolationError } from '../core/errors';
import { MANIFEST_FILE, type CheckpointEntry, type CheckpointManifest } from '../core/job-contract';
import { safeName } from './paths';
import { confinedPath, listConfined, lstatConfined, openConfined, readConfined, readRange } from './run-files';

/** The largest manifest read: a few hundred bytes a checkpoint, with per-file hashes for folders. */
export const MANIFEST_MAX_BYTES = 16 * 1024 * 1024;
/** The largest checkpoint file hashed (the schema's largest `trainer.limits.diskMb` is far above any real one). */
export const CHECKPOINT_FILE_MAX_BYTES = 4 * 1024 ** 4;

export function readManifest(runDir: string): CheckpointEntry[] {
  const file = path.join(runDir, MANIFEST_FILE);
  const bytes = readConfined(runDir, MANIFEST_FILE, { maxBytes: MANIFEST_MAX_BYTES, what: 'the checkpoint manifest' });
  if (bytes === undefined) throw new ContractViolationError(`${file}: missing`);
  let parsed: CheckpointManifest;
  try {
    parsed = JSON.parse(bytes.toString('utf8')) as CheckpointManifest;
  } catch {
    throw new ContractViolationError(`${file}: not valid JSON`);
  }
  if (!parsed || !Array.isArray(parsed.checkpoints)) throw new ContractViolationError(`${file}: no "checkpoints" array`);
  for (const [i, c] of parsed.checkpoints.entries()) {
    if (typeof c.path !== 'string' || typeof c.sha256 !== 'string' || !Number.isInteger(c.step) || typeof c.format !== 'string') {
      throw new ContractViolationError(`${file}: checkpoints[${i}] needs path, sha256, step and format`);
    }
    // Checked here, not only when hashed: the path is stored and later handed to predict and the scorer.
    confinedPath(runDir, c.path, `${file}: checkpoints[${i}]`);
  }
  return [...parsed.checkpoints].sort((a, b) => a.step - b.step);
}

/**
 * sha256 of the file `root/rel`, read confined (no link, a regular file, no more than its size when opened). `root`
 * is the folder the writer was given: the run directory, or the file's own folder when there is none to name.
 */
export function sha256File(file: string, root = path.dirname(file)): string {
  const rel = relativeIn(root, file);
  const f = openConfined(root, rel, { maxBytes: CHECKPOINT_FILE_MAX_BYTES, what: 'a checkpoint' });
  if (f === undefined) throw new ChecksumMismatchError(`checkpoint file ${file} is missing`);
  const h = crypto.createHash('sha256');
  try {
    const chunk = 1 << 20;
    for (let at = 0; at < f.size; at += chunk) {
      const buf = readRange(f, at, Math.min(chunk, f.size - at));
      if (buf.length === 0) break;
      h.update(buf);
    }
  } finally {
    f.close();
  }
  return h.digest('hex');
}

/**
 * A checkpoint folder's digest (a Hugging Face model folder, say): sha256 over `<relative path>\t<file sha256>\n`
 * for every regular file under it, sorted by relative path ('/'-separated, byte order). Any added, removed, renamed
 * or changed file changes it. A symlink or anything but files and folders is refused: a frozen checkpoint is bytes.
 * The walk never follows a link, and stays inside `root` (the run directory; the folder itself by default).
 * trainers/hf/manifest.py computes the same.
 */
export function sha256Folder(dir: string, root = dir): { sha256: string; files: Record<string, string> } {
  const base = relativeIn(root, dir, true);
  const files: Record<string, string> = {};
  const walk = (rel: string): void => {
    const at = [base, rel].filter(Boolean).join('/');
    const entries = listConfined(root, at, 'a checkpoint folder');
    if (entries === undefined) throw new ChecksumMismatchError(`checkpoint folder ${path.join(root, at)} is missing`);
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const inRoot = [base, r].filter(Boolean).join('/');
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) files[r] = sha256File(path.join(root, inRoot), root);
      else throw new ChecksumMismatchError(`${path.join(root, inRoot)}: a checkpoint folder holds files and folders only`);
    }
  };
  walk('');
  const names = Object.keys(files).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const h = crypto.createHash('sha256');
  for (const n of names) h.update(`${n}\t${files[n]}\n`);
  return { sha256: h.digest('hex'), files: Object.fromEntries(names.map((n) => [n, files[n]])) };
}

/** sha256 of a checkpoint file's bytes, or a checkpoint folder's digest (sha256Folder), read confined to `root`. */
export function sha256Checkpoint(p: string, root = path.dirname(p)): string {
  const st = lstatConfined(root, relativeIn(root, p), 'a checkpoint');
  if (st === undefined) throw new ChecksumMismatchError(`checkpoint file ${p} is missing`);
  return st.isDirectory() ? sha256Folder(p, root).sha256 : sha256File(p, root);
}

/**
 * Throws ChecksumMismatchError when the checkpoint's bytes (a file, or every file of a folder) are not the ones the
 * manifest promised, and ContractViolationError when it is not bytes inside `root` (a link anywhere on the way or in
 * it, a FIFO, a device, a path outside). `root`: the run directory that holds it (checkpointRoot), which is all the
 * trainer could write; the checkpoint's own folder by default.
 */
export function verifyCheckpoint(file: string, sha256: string, what: string, root = path.dirname(file)): void {
  let actual: string;
  try {
    actual = sha256Checkpoint(file, root);
  } catch (e) {
    if (e instanceof ChecksumMismatchError) throw new ChecksumMismatchError(`${what}: ${e.message}`);
    if (e instanceof ContractViolationError) throw new ContractViolationError(`${what}: ${e.message}`);
    throw e;
  }
  if (actual !== sha256)
    throw new ChecksumMismatchError(`${what}: ${file} has sha256 ${actual.slice(0, 12)}…, manifest says ${sha256.slice(0, 12)}…`);
}

/**
 * Makes a verified checkpoint read-only for everyone (files 0444, folders 0555), walked confined to `root` as the
 * digest was: each sandbox is a uid of its own, so a checkpoint its trainer wrote owner-only (safetensors writes 0600)
 * would be unreadable to the predict that scores it and to the run that warm-starts from it; and a frozen checkpoint
 * is one nothing means to write again.
 */
export function freezeCheckpoint(file: string, root = path.dirname(file)): void {
  const freeze = (rel: string): void => {
    const st = lstatConfined(root, rel, 'a checkpoint');
    if (st === undefined) return;
    if (st.isDirectory()) {
      for (const e of listConfined(root, rel, 'a checkpoint folder') ?? []) freeze(`${rel}/${e.name}`);
      fs.chmodSync(path.join(root, rel), 0o555);
    } else if (st.isFile()) fs.chmodSync(path.join(root, rel), 0o444);
  };
  freeze(relativeIn(root, file));
}

/**
 * The run directory a stored checkpoint lies in (`…/runs/<safe run id>/…`, as services/paths.ts names it), found from
 * its own path: the folder its trainer could write, so the one it is verified within. A checkpoint stored elsewhere
 * (a test's, an import) is confined to its own folder.
 */
export function checkpointRoot(ckpt: { path: string; runId: string }): string {
  const parts = ckpt.path.split('/');
  const name = safeName(ckpt.runId);
  for (let i = 1; i < parts.length - 1; i++) if (parts[i] === name && parts[i - 1] === 'runs') return parts.slice(0, i + 1).join('/');
  return path.dirname(ckpt.path);
}

/** `file` as a path relative to `root` ('' for the root itself when allowed), or a ContractViolationError if outside. */
function relativeIn(root: string, file: string, allowRoot = false): string {
  const rel = path.relative(root, file);
  if (rel === '' && allowRoot) return '';
  if (rel === '' || rel === '..' || rel.startsWith('../') || path.isAbsolute(rel))
    throw new ContractViolationError(`${file}: is not inside ${root}, the folder it must be read from`);
  return rel.split(path.sep).join('/');
}
