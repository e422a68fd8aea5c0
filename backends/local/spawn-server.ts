// A small long-lived process that starts the local backend's launchers for the worker. Node forks the whole process
// to start a child, and copying a large worker's page tables stalls its event loop for milliseconds per spawn (and
// write-faults its pages afterwards); this helper is a bare `node` of about 40 MB, so each launch costs the worker a
// line written and a line read. One helper per worker process, started at the first launch, with no environment of
// its own (each request carries the job's), in a session of its own; it exits when the worker's pipe closes, so it
// never outlives its worker, and the detached launchers it started keep running when it goes.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import readline from 'node:readline';
import { FlywheelError } from '../../core/errors';

/**
 * The helper's whole program (plain JavaScript, run with `node -e`, only node:child_process): one JSON request a line
 * on stdin, {id, file, args, cwd, env, detached}, each spawned with stdio ignored and unref'd; one reply a line on
 * stdout, {id, pid} or {id, error, code}. The end of stdin (the worker exited or was killed) ends it.
 */
export const SPAWN_SERVER_SCRIPT = `'use strict';
const { spawn } = require('node:child_process');
process.title = 'flywheel-spawn-server';
const reply = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const handle = (line) => {
  let r;
  try { r = JSON.parse(line); } catch { return reply({ id: null, error: 'an unreadable request' }); }
  const fail = (e) => reply({ id: r.id, error: String(e && e.message), code: e && e.code });
  let c;
  try { c = spawn(r.file, r.args, { cwd: r.cwd, env: r.env, detached: !!r.detached, stdio: 'ignore' }); } catch (e) { return fail(e); }
  if (c.pid === undefined) return void c.once('error', fail);
  c.on('error', () => {});
  c.unref();
  reply({ id: r.id, pid: c.pid });
};
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buf += chunk;
  for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (line) handle(line);
  }
});
process.stdin.on('end', () => process.exit(0));
process.stdout.on('error', () => process.exit(0));
`;

/** Bounds the helper's own heap: it holds one request at a time. */
const NODE_FLAGS = ['--max-old-space-size=64', '--max-semi-space-size=1'];

export interface SpawnRequest {
  file: string;
  args: string[];
  cwd: string;
  /** The child's whole environment: the helper passes on nothing of its own (it has none). */
  env: Record<string, string>;
  detached: boolean;
}

/** The helper refused a request: the child was not started (no such program or folder, too many processes). */
export class SpawnRefusedError extends FlywheelError {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * The helper exited with a request in flight: it may or may not have started the child, so the caller must look for
 * the child's own record before anything else. Retryable: the next request starts a new helper.
 */
export class SpawnServerExitedError extends FlywheelError {}

interface Pending {
  resolve(pid: number): void;
  reject(e: Error): void;
}

export class SpawnServer {
  private child?: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /** The helper's pid while one runs (tests and `ps`). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts `file` with `args` from the helper and resolves with its pid once the helper has started it. */
  spawn(req: SpawnRequest): Promise<number> {
    const child = this.running();
    const id = this.nextId++;
    return new Promise<number>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.hold(child, true);
      child.stdin!.write(JSON.stringify({ id, ...req }) + '\n');
    });
  }

  /** Ends the helper (tests; a worker's helper ends with the worker). */
  stop(): void {
    this.child?.kill('SIGKILL');
  }

  private running(): ChildProcess {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) return this.child;
    const child = spawn(process.execPath, [...NODE_FLAGS, '-e', SPAWN_SERVER_SCRIPT], {
      cwd: '/',
      env: {},
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    this.child = child;
    const gone = (why: string) => this.gone(child, why);
    child.on('error', (e) => gone(`could not start: ${e.message}`));
    // 'close', not 'exit': a reply the helper wrote before it died is still read first.
    child.on('close', (code, sig) => gone(`exited (${sig ?? `code ${code}`})`));
    child.stdin!.on('error', () => undefined); // a helper that died: 'close' follows
    readline.createInterface({ input: child.stdout! }).on('line', (line) => this.answer(line));
    child.unref();
    this.hold(child, false);
    return child;
  }

  private answer(line: string): void {
    let r: { id: number; pid?: number; error?: string; code?: string };
    try {
      r = JSON.parse(line);
    } catch {
      return;
    }
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    if (this.pending.size === 0 && this.child) this.hold(this.child, false);
    if (typeof r.pid === 'number') p.resolve(r.pid);
    else p.reject(new SpawnRefusedError(r.error ?? 'the spawn helper started nothing', r.code));
  }

  /** Fails every request in flight on a helper that has gone; the next request starts a new one. */
  private gone(child: ChildProcess, why: string): void {
    if (this.child !== child) return;
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    const err = new SpawnServerExitedError(`the spawn helper (pid ${child.pid}) ${why} before it answered`);
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /** Keeps the worker's event loop alive only while a reply is awaited: an idle helper never holds a process open. */
  private hold(child: ChildProcess, on: boolean): void {
    for (const s of [child.stdin, child.stdout] as unknown as Socket[]) {
      if (on) s?.ref?.();
      else s?.unref?.();
    }
  }
}

let shared: SpawnServer | undefined;

/** This process's helper (one per worker process, whatever number of backends it builds). */
export function sharedSpawnServer(): SpawnServer {
  return (shared ??= new SpawnServer());
}
