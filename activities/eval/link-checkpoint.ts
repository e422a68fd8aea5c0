// Shows a frozen checkpoint to a warm predict server: the file, or every file of the folder, hard-linked into the
// server's read-only inbox (no bytes copied; a copy only where links cannot be made, across filesystems). Only regular
// files and folders are taken, never followed through a symlink: a checkpoint is bytes, and a link to elsewhere would
// show the server a file of the worker's.
import fs from 'node:fs';
import path from 'node:path';
import { ContractViolationError } from '../../core/errors';

/** Errors of link(2) that a copy gets around: another filesystem, a host that forbids linking, too many links. */
const COPY_INSTEAD = new Set(['EXDEV', 'EPERM', 'EMLINK', 'EACCES']);

export function linkCheckpoint(src: string, dest: string): void {
  const st = fs.lstatSync(src);
  if (st.isDirectory()) {
    // Readable by the server's own uid (backends/sandbox/sandbox-identity.ts); the inbox above it is the worker's.
    fs.mkdirSync(dest, { mode: 0o755 });
    for (const name of fs.readdirSync(src)) linkCheckpoint(path.join(src, name), path.join(dest, name));
  } else if (st.isFile()) {
    try {
      fs.linkSync(src, dest);
    } catch (e) {
      if (!COPY_INSTEAD.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
      fs.copyFileSync(src, dest);
    }
  } else {
    throw new ContractViolationError(`${src}: a checkpoint holds files and folders only`);
  }
}
