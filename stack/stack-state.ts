// `<home>/stack.json`: written by `flywheel up` while it runs (addresses and pids), removed on a clean stop,
// so other commands can find and reuse a running stack instead of starting a second one on the same folder.
import fs from 'node:fs';
import path from 'node:path';
import type { QueueFamily } from '../contracts/queues';
import { commandLine, isAlive, stopProcess } from './processes';

export interface StackState {
  version: 1;
  /** The `flywheel up` process. */
  pid: number;
  startedAt: string;
  home: string;
  temporal: { address: string; namespace: string; uiUrl?: string; external: boolean; pid?: number };
  /**
   * The URL as the workers use it, password included (the file is written mode 0600): on the embedded server the
   * application role's, never the superuser's (whose password stays in its own 0600 file beside the data dir).
   */
  postgres: { url: string; external: boolean; pid?: number };
  taskQueuePrefix: string;
  workers: Partial<Record<QueueFamily, { pid: number; taskQueue: string }>>;
}

export function stackStatePath(home: string): string {
  return path.join(home, 'stack.json');
}

/** Writes the state atomically (a reader never sees half a file). */
export function writeStackState(state: StackState): void {
  const file = stackStatePath(state.home);
  fs.mkdirSync(state.home, { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** The recorded state, live or stale; undefined when there is none or it cannot be parsed. */
export function readStackState(home: string): StackState | undefined {
  try {
    const s = JSON.parse(fs.readFileSync(stackStatePath(home), 'utf8')) as StackState;
    return s.version === 1 && typeof s.pid === 'number' ? s : undefined;
  } catch {
    return undefined;
  }
}

export function removeStackState(home: string): void {
  fs.rmSync(stackStatePath(home), { force: true });
}

/** The stack a live `flywheel up` is serving from `home`, or undefined (none, or it died and left a stale file). */
export function findRunningStack(home: string): StackState | undefined {
  const s = readStackState(home);
  return s && isAlive(s.pid) && /flywheel|node/.test(commandLine(s.pid) ?? '') ? s : undefined;
}

/**
 * After a `flywheel up` that was killed (SIGKILL, OOM), its children may still hold the ports and the PG data dir.
 * Stops those whose pid still runs the same program (a pid can be reused), then removes the file; returns what it stopped.
 */
export async function reapStaleStack(home: string): Promise<string[]> {
  const s = readStackState(home);
  if (!s || findRunningStack(home)) return [];
  const candidates: Array<[string, number | undefined, RegExp]> = [
    ...Object.entries(s.workers).map(([f, w]): [string, number, RegExp] => [`worker ${f}`, w.pid, /worker/]),
    ['temporal', s.temporal.pid, /start-dev/],
    ['postgres', s.postgres.pid, /postgres/],
  ];
  const stopped: string[] = [];
  for (const [name, pid, pattern] of candidates) {
    if (pid && isAlive(pid) && pattern.test(commandLine(pid) ?? '')) {
      // SIGINT is PostgreSQL's fast shutdown; SIGTERM would wait for clients.
      await stopProcess(pid, { graceMs: 10_000, signal: name === 'postgres' ? 'SIGINT' : 'SIGTERM' });
      stopped.push(`${name} (pid ${pid})`);
    }
  }
  removeStackState(home);
  return stopped;
}
