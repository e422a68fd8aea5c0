// Keeps one worker process per queue family alive under `flywheel up`: a worker that dies unexpectedly
// (a crash, an OOM kill, SIGKILL) is restarted after a short backoff while the other families keep serving.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { QueueFamily } from '../contracts/queues';
import type { StackEvent } from './events';
import { openLogFile, stopProcess, tailFile } from './processes';

/** The IPC message a worker sends once it polls its task queue (see cli/commands/worker.ts). */
export interface WorkerReadyMessage {
  type: 'flywheel-worker-ready';
  taskQueue: string;
}

/** Sent to a preloaded worker once the servers are up: the environment it resolves its config from. */
export interface WorkerStartMessage {
  type: 'flywheel-worker-start';
  env: NodeJS.ProcessEnv;
}

/** Set in a preloaded worker's environment: load code, then wait for a WorkerStartMessage. */
export const AWAIT_START_ENV = 'FLYWHEEL_WORKER_AWAIT_START';

export interface WorkerSupervisorOptions {
  family: QueueFamily;
  taskQueue: string;
  /** FLYWHEEL_HOME: the worker's log goes to `<home>/logs/worker-<family>.log`. */
  home: string;
  /** argv of the worker process. @default [node, bin/flywheel.js, "worker", "--queue", family] */
  command?: string[];
  /** A start that has not reported ready by then is killed (and, once up, retried). @default 90000 */
  readyTimeoutMs?: number;
  /** First restart delay; doubles per quick crash. @default 500 */
  backoffMs?: number;
  /** @default 10000 */
  maxBackoffMs?: number;
  /** A worker that stayed up this long restarts with the first delay again. @default 30000 */
  stableAfterMs?: number;
  /** @default ignore */
  onEvent?: (e: StackEvent) => void;
}

const FLYWHEEL_BIN = path.resolve(__dirname, '../bin/flywheel.js');

export class WorkerSupervisor {
  private readonly opts: Required<WorkerSupervisorOptions>;
  private child: ChildProcess | undefined;
  private preloaded: Promise<number> | undefined;
  private env: NodeJS.ProcessEnv = process.env;
  private restarts = 0;
  private delay: number;
  private stopping = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(opts: WorkerSupervisorOptions) {
    // `??` rather than a spread: an option passed as undefined still gets its default.
    this.opts = {
      ...opts,
      command: opts.command ?? [process.execPath, FLYWHEEL_BIN, 'worker', '--queue', opts.family],
      readyTimeoutMs: opts.readyTimeoutMs ?? 90_000,
      backoffMs: opts.backoffMs ?? 500,
      maxBackoffMs: opts.maxBackoffMs ?? 10_000,
      stableAfterMs: opts.stableAfterMs ?? 30_000,
      onEvent: opts.onEvent ?? (() => undefined),
    };
    this.delay = this.opts.backoffMs;
  }

  /** The live worker's pid (it changes on a restart). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Spawns the worker before its servers exist, so it loads its code and builds its workflow bundle (seconds
   * each) while Temporal and PostgreSQL start; start() then hands it their addresses.
   */
  preload(env: NodeJS.ProcessEnv): void {
    this.preloaded = this.spawnOnce({ ...env, [AWAIT_START_ENV]: '1' });
    this.preloaded.catch(() => undefined); // surfaced by start()
  }

  /** Starts (or releases the preloaded) worker with `env`; resolves with its pid once it polls its queue. */
  async start(env: NodeJS.ProcessEnv): Promise<number> {
    this.env = env;
    let ready: Promise<number>;
    if (this.preloaded) {
      ready = this.preloaded;
      const start: WorkerStartMessage = { type: 'flywheel-worker-start', env };
      if (this.child?.connected) this.child.send(start);
    } else {
      ready = this.spawnOnce(env);
    }
    const pid = await ready;
    this.opts.onEvent({ kind: 'worker-ready', family: this.opts.family, taskQueue: this.opts.taskQueue, pid, restart: 0 });
    return pid;
  }

  /** Stops the worker (SIGTERM: it drains, then exits) and cancels any pending restart. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    const pid = this.child?.pid;
    if (pid && this.child?.exitCode === null && this.child.signalCode === null) await stopProcess(pid, { graceMs: 20_000 });
  }

  private spawnOnce(env: NodeJS.ProcessEnv): Promise<number> {
    const log = openLogFile(this.opts.home, `worker-${this.opts.family}`);
    const [cmd, ...args] = this.opts.command;
    // detached: its own process group, so a terminal's Ctrl-C reaches `flywheel up` alone, which stops workers first.
    const child = spawn(cmd, args, { stdio: ['ignore', log.fd, log.fd, 'ipc'], env, detached: true });
    fs.closeSync(log.fd);
    this.child = child;
    const startedAt = Date.now();
    return new Promise<number>((resolve, reject) => {
      let ready = false;
      const readyTimer = setTimeout(() => child.kill('SIGKILL'), this.opts.readyTimeoutMs);
      child.on('message', (m: WorkerReadyMessage) => {
        if (m?.type !== 'flywheel-worker-ready' || ready) return;
        ready = true;
        clearTimeout(readyTimer);
        resolve(child.pid!);
      });
      child.once('error', (e) => reject(new Error(`worker ${this.opts.family} could not start: ${e.message}`)));
      child.once('exit', (code, signal) => {
        clearTimeout(readyTimer);
        const how = signal ?? `code ${code}`;
        if (!ready)
          reject(new Error(`worker ${this.opts.family} exited before it was ready (${how}); log ${log.path}:\n${tailFile(log.path)}`));
        // A worker that never got ready at start-up fails the stack instead; after that, every death restarts.
        if (!this.stopping && (ready || this.restarts > 0)) this.scheduleRestart(child.pid!, how, Date.now() - startedAt);
      });
    });
  }

  private scheduleRestart(pid: number, how: string, livedMs: number): void {
    if (livedMs > this.opts.stableAfterMs) this.delay = this.opts.backoffMs;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.opts.maxBackoffMs);
    this.opts.onEvent({ kind: 'worker-exited', family: this.opts.family, pid, how, restartInMs: wait });
    this.timer = setTimeout(() => {
      if (this.stopping) return;
      const restart = ++this.restarts;
      this.spawnOnce(this.env).then(
        (newPid) =>
          this.opts.onEvent({ kind: 'worker-ready', family: this.opts.family, taskQueue: this.opts.taskQueue, pid: newPid, restart }),
        // A failed restart schedules the next one from its own exit handler.
        (e: Error) => this.opts.onEvent({ kind: 'warning', message: e.message.split('\n')[0] }),
      );
    }, wait);
  }
}
