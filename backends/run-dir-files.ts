// Small records a backend keeps about a run (pid, job id, exit code, stamps, launch count, captured logs): read back
// by any worker. They live in the run's launch directory, a sibling of the run directory that the trainer never sees
// (only the run directory is bound into its sandbox), so nothing the trainer writes can forge them.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ENDED_AT_FILE, LAUNCH_DIR_SUFFIX, STARTED_AT_FILE } from '../core/contract-files';

/** The launcher-owned sibling of a run directory: `<runDir>.launch`. */
export function launchDirOf(runDir: string): string {
  return `${runDir.replace(/\/+$/, '')}${LAUNCH_DIR_SUFFIX}`;
}

/** Makes the run's launch directory (0700: only the worker reads it) and returns its path. */
export function makeLaunchDir(runDir: string): string {
  const dir = launchDirOf(runDir);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The file's trimmed text, or undefined when it is missing or empty. */
export function readTrimmed(file: string): string | undefined {
  try {
    const s = fs.readFileSync(file, 'utf8').trim();
    return s === '' ? undefined : s;
  } catch {
    return undefined;
  }
}

/** Written whole under a temporary name, then renamed: a reader sees the old content or the new, never half. */
export function writeAtomic(file: string, content: string): void {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

/** Seconds between the launcher's `started_at` and `ended_at` stamps in a launch directory, when both are there. */
export function trainerSecondsIn(launchDir: string): number | undefined {
  const a = Number(readTrimmed(path.join(launchDir, STARTED_AT_FILE)));
  const b = Number(readTrimmed(path.join(launchDir, ENDED_AT_FILE)));
  return Number.isFinite(a) && Number.isFinite(b) && b >= a ? b - a : undefined;
}

/**
 * The last `lines` lines of a captured log, reading at most its last 64 KB. Opened without following a link or
 * blocking, and only if it is a regular file: a log is the trainer's text, and where its folder could ever be
 * reached by the trainer a link or a FIFO in its place must neither leak a file nor hang the worker.
 */
export function tailFile(file: string, lines: number): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return '';
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return '';
    const len = Math.min(st.size, 64 * 1024);
    const buf = Buffer.alloc(len);
    const n = fs.readSync(fd, buf, 0, len, st.size - len);
    return buf.subarray(0, n).toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } finally {
    fs.closeSync(fd);
  }
}
