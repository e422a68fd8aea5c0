// Small process helpers for the dev stack: liveness by pid, waiting for an exit, stopping with a grace period,
// and per-component log files (children write there so `flywheel up` prints only its own readiness lines).
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAlive } from '../backends/local/process-liveness';

// One liveness check for the whole code base (zombies count as gone); re-exported for the stack's modules.
export { isAlive };

/** The command line of a live process, or undefined (used to check a recorded pid was not reused). */
export function commandLine(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** Resolves true once `pid` is gone, false when `timeoutMs` passes first. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

export interface StopOptions {
  /** The polite signal. @default "SIGTERM" */
  signal?: NodeJS.Signals;
  /** How long to wait for a clean exit before SIGKILL. @default 15000 */
  graceMs?: number;
  /** Signal the whole process group (children started with `detached: true` lead their own group). @default false */
  group?: boolean;
}

/** Stops `pid`: the polite signal, then SIGKILL after the grace period. Resolves once it is gone. */
export async function stopProcess(pid: number, opts: StopOptions = {}): Promise<void> {
  const target = opts.group ? -pid : pid;
  const send = (sig: NodeJS.Signals): void => {
    try {
      process.kill(target, sig);
    } catch {
      /* already gone */
    }
  };
  if (!isAlive(pid)) return;
  send(opts.signal ?? 'SIGTERM');
  if (await waitForExit(pid, opts.graceMs ?? 15_000)) return;
  send('SIGKILL');
  await waitForExit(pid, 5_000);
}

const START_MARK = '--- ';

/** Opens `<home>/logs/<name>.log` for appending, after a start marker; the fd goes to a child's stdout and stderr. */
export function openLogFile(home: string, name: string): { fd: number; path: string } {
  const dir = path.join(home, 'logs');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.log`);
  const fd = fs.openSync(file, 'a');
  fs.writeSync(fd, `${START_MARK}${new Date().toISOString()} starting ${name}\n`);
  return { fd, path: file };
}

/**
 * The last `lines` lines of a log file, for the message when a component fails to start. With `errorsOnly`, only
 * the lines that look like errors (a server's shutdown chatter would otherwise bury the one line that matters).
 */
export function tailFile(file: string, lines = 15, errorsOnly = false): string {
  let all: string[];
  try {
    all = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
  } catch {
    return '';
  }
  // Only this start's lines: the file keeps earlier runs.
  const mark = all.map((l) => l.startsWith(START_MARK)).lastIndexOf(true);
  all = all.slice(mark + 1);
  const errors = errorsOnly ? all.filter((l) => /error|fatal|panic|could not/i.test(l) && !/level=(WARN|INFO|DEBUG)/.test(l)) : [];
  return (errors.length ? errors : all).slice(-lines).join('\n');
}
