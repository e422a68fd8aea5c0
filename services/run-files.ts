// Confined reads of files an untrusted program wrote: a trainer's run directory (metrics, manifest, checkpoints) and
// predict's scratch folder (its predictions). The program chooses what lies there, so a path could climb out (`..`,
// absolute), a link could point at the worker's secrets, a FIFO could block the worker forever and a device or a huge
// file could feed it without end. Every read here is confined to its root, follows no link, never blocks, opens only a
// regular file and stops at a size cap; anything else is one ContractViolationError line naming the file.
import fs from 'node:fs';
import path from 'node:path';
import { ContractViolationError } from '../core/errors';
import { formatBytes } from '../core/format-bytes';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
const OPEN_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;

/** What a read is of, and the most bytes it may take (the file's size, not just what is read of it). */
export interface ReadLimits {
  /** The most bytes the file may hold: a larger one is refused, naming the cap. */
  maxBytes: number;
  /** What the file is, for the error (`metrics`, `the checkpoint manifest`). */
  what: string;
}

/**
 * `rel` resolved under `root`: a relative path whose every component is a plain name. An absolute path, `..`, `.`,
 * an empty component or a NUL byte is a ContractViolationError: the writer may not name a file outside its folder.
 */
export function confinedPath(root: string, rel: string, what: string): string {
  if (typeof rel !== 'string' || rel === '' || rel.includes('\0'))
    throw new ContractViolationError(`${what}: path ${JSON.stringify(rel)} is not a file name`);
  if (path.isAbsolute(rel)) throw new ContractViolationError(`${what}: path "${rel}" is absolute (it must be relative to ${root})`);
  for (const part of rel.split('/'))
    if (part === '' || part === '.' || part === '..')
      throw new ContractViolationError(`${what}: path "${rel}" leaves or re-enters its folder ("${part}"): it must stay inside ${root}`);
  return path.join(root, rel);
}

/**
 * The lstat of `root/rel` after checking every component on the way, or undefined when something on the way is
 * missing. No component may be a symlink, and every one but the last must be a folder. The root itself is the
 * caller's (a run directory Flywheel made), resolved once; it may not be a link either.
 */
export function lstatConfined(root: string, rel: string, what: string): fs.Stats | undefined {
  confinedPath(root, rel, what);
  let at = rootOf(root, what);
  if (at === undefined) return undefined;
  const parts = rel.split('/');
  let st: fs.Stats | undefined;
  for (const [i, part] of parts.entries()) {
    at = path.join(at, part);
    try {
      st = fs.lstatSync(at);
    } catch (e) {
      if (isMissing(e)) return undefined;
      throw e;
    }
    if (st.isSymbolicLink()) throw new ContractViolationError(`${at}: is a symbolic link (${what} is never read through a link)`);
    if (i < parts.length - 1 && !st.isDirectory()) throw new ContractViolationError(`${at}: is not a folder (${what})`);
  }
  return st;
}

/** An open, confined, regular file: its descriptor and its size when opened. Close it. */
export interface ConfinedFile {
  fd: number;
  /** The file's size when it was opened: read no more than this (a file still being written grows). */
  size: number;
  /** The path it was opened at. */
  file: string;
  close(): void;
}

/**
 * Opens `root/rel` for reading, confined: every component checked (lstatConfined), opened O_RDONLY | O_NOFOLLOW |
 * O_NONBLOCK (a FIFO does not block the open), then fstat must say a regular file within `maxBytes`, and the kernel's
 * own name for the open file must be the path asked for (a folder swapped for a link between the check and the open
 * is caught here). Undefined when the file is missing; a ContractViolationError for anything else that is wrong.
 */
export function openConfined(root: string, rel: string, limits: ReadLimits): ConfinedFile | undefined {
  const st = lstatConfined(root, rel, limits.what);
  if (st === undefined) return undefined;
  const file = path.join(root, rel);
  // Refused before any open: opening a device or a socket can itself do something.
  if (!st.isFile()) throw new ContractViolationError(`${file}: is ${kindOf(st)}, not a regular file (${limits.what})`);
  let fd: number;
  try {
    fd = fs.openSync(file, OPEN_FLAGS);
  } catch (e) {
    if (isMissing(e)) return undefined;
    if ((e as NodeJS.ErrnoException).code === 'ELOOP')
      throw new ContractViolationError(`${file}: is a symbolic link (${limits.what} is never read through a link)`);
    throw e;
  }
  try {
    const now = fs.fstatSync(fd);
    if (!now.isFile()) throw new ContractViolationError(`${file}: is ${kindOf(now)}, not a regular file (${limits.what})`);
    if (now.size > limits.maxBytes)
      throw new ContractViolationError(
        `${file}: ${formatBytes(now.size)} is over the ${formatBytes(limits.maxBytes)} cap on ${limits.what}`,
      );
    checkOpenedPath(fd, root, rel, limits.what);
    return { fd, size: now.size, file, close: () => fs.closeSync(fd) };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/** The whole file, confined and capped (openConfined); undefined when it is missing. */
export function readConfined(root: string, rel: string, limits: ReadLimits): Buffer | undefined {
  const f = openConfined(root, rel, limits);
  if (f === undefined) return undefined;
  try {
    return readRange(f, 0, f.size);
  } finally {
    f.close();
  }
}

/** Up to `length` bytes of an open confined file from `position` (fewer at its end). */
export function readRange(f: ConfinedFile, position: number, length: number): Buffer {
  const buf = Buffer.alloc(Math.max(0, length));
  let got = 0;
  while (got < buf.length) {
    const n = fs.readSync(f.fd, buf, got, buf.length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got === buf.length ? buf : buf.subarray(0, got);
}

/**
 * The entries of the folder `root/rel` ('' for the root itself), with their lstat types: confined as a file is, and
 * never followed through a link. Undefined when it is missing.
 */
export function listConfined(root: string, rel: string, what: string): fs.Dirent[] | undefined {
  const dir = rel === '' ? rootOf(root, what) : path.join(root, rel);
  if (dir === undefined) return undefined;
  if (rel !== '') {
    const st = lstatConfined(root, rel, what);
    if (st === undefined) return undefined;
    if (!st.isDirectory()) throw new ContractViolationError(`${dir}: is ${kindOf(st)}, not a folder (${what})`);
  }
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
}

/** The root, which must be a real folder (a link there means someone replaced it); undefined when it is missing. */
function rootOf(root: string, what: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(root);
  } catch (e) {
    if (isMissing(e)) return undefined;
    throw e;
  }
  if (st.isSymbolicLink()) throw new ContractViolationError(`${root}: is a symbolic link, not the folder ${what} is read from`);
  if (!st.isDirectory()) throw new ContractViolationError(`${root}: is not a folder (${what} is read from it)`);
  return root;
}

/**
 * Linux names every open file in /proc/self/fd: it must be the real root joined with `rel`, exactly. A component
 * that became a link after lstatConfined looked (a race the writer can try) resolves elsewhere and is refused. Where
 * /proc is not mounted the component checks stand alone.
 */
function checkOpenedPath(fd: number, root: string, rel: string, what: string): void {
  let opened: string;
  try {
    opened = fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return;
  }
  const expected = path.join(fs.realpathSync(root), rel);
  if (opened !== expected) throw new ContractViolationError(`${path.join(root, rel)}: opened as ${opened}, outside its folder (${what})`);
}

function kindOf(st: fs.Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
