// Drives a real `flywheel up` child process for the stack tests and the start-up bench: free ports, its output
// as lines to wait on, the pids it reports (stack.json), and a kill-everything for afterAll.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { readStackState, type StackState } from '../../stack/stack-state';
import { commandLine, isAlive } from '../../stack/processes';
import { freePort } from '../helpers/ports';

const BIN = path.resolve(__dirname, '../../bin/flywheel.js');

export interface UpProcess {
  child: ChildProcess;
  home: string;
  env: NodeJS.ProcessEnv;
  lines: string[];
  /** Resolves with the index of the first line at or after `after` matching `pattern`; rejects on exit or timeout. */
  waitFor(pattern: RegExp, opts?: { after?: number; timeoutMs?: number }): Promise<number>;
  /** Every pid seen in stack.json while up ran (read it with state() after "flywheel is up"). */
  pids: Set<number>;
  /** Reads stack.json and remembers its pids. */
  state(): StackState | undefined;
  /** Resolves with the exit code/signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILLs `up` and every pid it reported; for afterAll, where a failed test must not leave processes. */
  killAll(): void;
}

/**
 * The env for a stack on its own free ports and home. DATABASE_URL, TEMPORAL_ADDRESS and FLYWHEEL_TASK_QUEUE_PREFIX
 * are unset unless `extra` sets them: the stack's queues are `flywheel-<family>` whatever the caller's shell exports.
 */
export async function stackEnv(home: string, extra: Record<string, string | undefined> = {}): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FLYWHEEL_HOME: home,
    FLYWHEEL_TEMPORAL_PORT: String(await freePort()),
    FLYWHEEL_TEMPORAL_UI_PORT: String(await freePort()),
    FLYWHEEL_PG_PORT: String(await freePort()),
    FLYWHEEL_DASHBOARD_PORT: String(await freePort()),
    ...extra,
  };
  for (const k of ['DATABASE_URL', 'TEMPORAL_ADDRESS', 'FLYWHEEL_TASK_QUEUE_PREFIX']) if (!extra[k]) delete env[k];
  return env;
}

export function spawnUp(home: string, env: NodeJS.ProcessEnv): UpProcess {
  const child = spawn(process.execPath, [BIN, 'up'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let buffered = '';
  const onData = (chunk: Buffer): void => {
    buffered += chunk.toString();
    const parts = buffered.split('\n');
    buffered = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      for (const w of waiters) w();
      resolve({ code, signal });
    }),
  );
  const pids = new Set<number>([child.pid!]);
  const up: UpProcess = {
    child,
    home,
    env,
    lines,
    pids,
    exited,
    state() {
      const s = readStackState(home);
      if (s) for (const p of [s.pid, s.temporal.pid, s.postgres.pid, ...Object.values(s.workers).map((w) => w?.pid)]) if (p) pids.add(p);
      return s;
    },
    waitFor(pattern, opts = {}) {
      const timeoutMs = opts.timeoutMs ?? 120_000;
      return new Promise<number>((resolve, reject) => {
        const check = (): void => {
          const i = lines.findIndex((l, idx) => idx >= (opts.after ?? 0) && pattern.test(l));
          if (i >= 0) done(() => resolve(i));
          else if (child.exitCode !== null || child.signalCode !== null)
            done(() => reject(new Error(`up exited before ${pattern}:\n${lines.join('\n')}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`timed out waiting for ${pattern}:\n${lines.join('\n')}`))), timeoutMs);
        const done = (f: () => void): void => {
          clearTimeout(timer);
          waiters.delete(check);
          f();
        };
        waiters.add(check);
        check();
      });
    },
    killAll() {
      up.state();
      for (const pid of pids) {
        for (const target of [-pid, pid]) {
          try {
            process.kill(target, 'SIGKILL');
          } catch {
            /* gone, or not a group leader */
          }
        }
      }
    },
  };
  return up;
}

/** The pids among `pids` that are still running. */
export function livePids(pids: Iterable<number>): number[] {
  return [...pids].filter((p) => isAlive(p));
}

/** Live processes whose command line names `text` (the dev server's --db-filename and PostgreSQL's -D hold the home). */
export function processesMentioning(text: string): string[] {
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d) && Number(d) !== process.pid && isAlive(Number(d)))
    .map((d) => `${d}: ${commandLine(Number(d)) ?? ''}`)
    .filter((line) => line.includes(text));
}
