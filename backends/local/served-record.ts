// What the launch directory of a run a warm trainer served (`trainer.warmTrain`) records of its server: the server's
// folder (bound read-write into its sandbox, and its processes' working directory) and the run's own folder in it,
// where the run writes until its outputs are copied out. Written by the training worker, never by the trainer (the
// launch directory is not bound into any sandbox), so the local backend can tell the server's processes from any
// other and watch the folder the run really writes.
import fs from 'node:fs';
import path from 'node:path';
import { SERVED_FILE } from '../../core/contract-files';
import { readTrimmed, writeAtomic } from '../run-dir-files';

export interface ServedRecord {
  /** The server's folder: its cwd, bound read-write. */
  serverDir: string;
  /** The run's folder inside it while the run is served (`<serverDir>/<n>`). */
  runDir: string;
}

export function writeServed(launchDir: string, record: ServedRecord): void {
  writeAtomic(path.join(launchDir, SERVED_FILE), JSON.stringify(record) + '\n');
}

export function readServed(launchDir: string): ServedRecord | undefined {
  const s = readTrimmed(path.join(launchDir, SERVED_FILE));
  return s === undefined ? undefined : (JSON.parse(s) as ServedRecord);
}

/** Whether `pid` is a process of the server `record` names: its working directory is the server's folder. */
export function isServerOf(pid: number, record: ServedRecord): boolean {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`) === record.serverDir;
  } catch {
    return false;
  }
}
