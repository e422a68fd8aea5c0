// The local backend: the trainer runs as a detached process group under a tiny POSIX-sh launcher that records its
// pid, start and end times, exit code and captured logs in the run's launch directory (`<runDir>.launch`), which the
// trainer never sees: only the run directory is bound into its sandbox, so nothing it writes can forge a record.
// Files, not the worker's memory, are the truth, so a new worker process reattaches to a job an old one launched.
// The worker's spawn helper (spawn-server.ts) starts the launcher, so the worker never forks its own large process.
// With LaunchRequest.limits, the logs are capped and status() watches the run (run-usage.ts): a run past a limit is
// killed and ends `failed` with the limit named, recorded in the launch directory so any worker reports the same.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CANCELLED_FILE,
  ENDED_AT_FILE,
  EXIT_CODE_FILE,
  JOB_PID_FILE,
  LAUNCH_LOCK,
  LAUNCHES_LOG,
  LIMIT_FILE,
  LIMITS_FILE,
  STARTED_AT_FILE,
  STDERR_LOG,
  STDOUT_LOG,
  TRAINER_EXIT_FILE,
} from '../../core/contract-files';
import { mib, type LimitBreach, type ResourceLimits } from '../../core/resource-limits';
import type { JobHandle, JobStatus, LaunchRequest, TrainingBackend } from '../backend';
import { watchForFile } from './end-watch';
import { groupMembers, isAlive } from './process-liveness';
import { launchDirOf, makeLaunchDir, readTrimmed, tailFile, trainerSecondsIn, writeAtomic } from '../run-dir-files';
import { isLauncherOf, logBreach, runProcesses, RunWatcher, stillRunning, type Proc } from './run-usage';
import { sharedSpawnServer, SpawnServerExitedError, type SpawnServer } from './spawn-server';
import { isServerOf, readServed, type ServedRecord } from './served-record';
import { salvageServedRun } from './served-outputs';
import { sharedTrainServers, type TrainServers } from './train-servers';
import { FlywheelError } from '../../core/errors';

/**
 * A constant script: $1 is the launch directory, $2 the bytes of each log to keep (0: no cap), and the trainer's argv
 * arrives as the rest ("$@"), never interpolated. With a cap, stdout and stderr each go through `head -c`, which keeps
 * one byte more than the cap and then exits: the trainer's next write gets SIGPIPE (or EPIPE), and a log that holds
 * that extra byte says the cap was passed. The trainer's exit code is recorded from inside the pipeline's group (the
 * pipeline's own status is head's) and read back with the `read` builtin (no fork).
 */
export const LAUNCHER = [
  'd=$1; keep=$2; shift 2',
  `echo $$ >> "$d/${LAUNCHES_LOG}"`,
  `echo $$ > "$d/${JOB_PID_FILE}"`,
  `date +%s.%N > "$d/${STARTED_AT_FILE}"`,
  'if [ "$keep" -gt 0 ]; then',
  `  { { "$@" < /dev/null 3>&-; echo $? > "$d/${TRAINER_EXIT_FILE}"; } 2>&1 >&3 3>&- | head -c "$keep" > "$d/${STDERR_LOG}" 3>&-; } 3>&1 | head -c "$keep" > "$d/${STDOUT_LOG}"`,
  'else',
  `  "$@" > "$d/${STDOUT_LOG}" 2> "$d/${STDERR_LOG}" < /dev/null; echo $? > "$d/${TRAINER_EXIT_FILE}"`,
  'fi',
  `read code < "$d/${TRAINER_EXIT_FILE}" || code=255`,
  `date +%s.%N > "$d/${ENDED_AT_FILE}"`,
  `echo $code > "$d/${EXIT_CODE_FILE}"`,
].join('\n');

export interface LocalBackendOptions {
  /** How long to wait for a launched job to record its pid. @default 10000 */
  pidWaitMs?: number;
  /** Grace between SIGTERM and SIGKILL on cancel. @default 5000 */
  killGraceMs?: number;
  /** What starts the launchers. @default this process's spawn helper */
  spawner?: Pick<SpawnServer, 'spawn'>;
  /** Where a served run (LaunchRequest.serve) runs. @default this process's warm trainers */
  servers?: Pick<TrainServers, 'serve'>;
  /** How long a served run's end may take to be recorded once its server is gone (its owner writes it). @default 1000 */
  servedEndWaitMs?: number;
}

/**
 * No launcher recorded its pid in time: none started, or one is still starting (the lock stays, so a retry waits for
 * its pid once more before it starts another). Retryable.
 */
export class LauncherNotStartedError extends FlywheelError {}

export class LocalBackend implements TrainingBackend {
  readonly kind = 'local';
  private readonly pidWaitMs: number;
  private readonly killGraceMs: number;
  private readonly spawner: Pick<SpawnServer, 'spawn'>;
  private readonly servers: Pick<TrainServers, 'serve'>;
  private readonly servedEndWaitMs: number;
  private readonly watcher = new RunWatcher();
  /** Each watched run's limits, read once from its launch directory (null: launched without). */
  private readonly limits = new Map<string, ResourceLimits | null>();
  /** Each watched run's served.json (null: a process of its own). */
  private readonly served = new Map<string, ServedRecord | null>();

  constructor(opts: LocalBackendOptions = {}) {
    this.pidWaitMs = opts.pidWaitMs ?? 10_000;
    this.killGraceMs = opts.killGraceMs ?? 5_000;
    this.spawner = opts.spawner ?? sharedSpawnServer();
    this.servers = opts.servers ?? sharedTrainServers();
    this.servedEndWaitMs = opts.servedEndWaitMs ?? 1000;
  }

  async launch(req: LaunchRequest): Promise<JobHandle> {
    fs.mkdirSync(req.runDir, { recursive: true });
    const dir = makeLaunchDir(req.runDir);
    const existing = readPid(dir);
    if (existing !== undefined) return this.handle(req, existing);
    // The lock makes two concurrent launches of one run (a retry racing a slow first attempt) start one process.
    const lock = path.join(dir, LAUNCH_LOCK);
    let fd: number;
    try {
      fd = fs.openSync(lock, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = await waitForPid(dir, this.pidWaitMs);
      if (pid !== undefined) return this.handle(req, pid);
      // The launcher that took the lock died before spawning: nothing runs, so take over.
      fs.rmSync(lock, { force: true });
      return this.launch(req);
    }
    fs.writeSync(fd, `${process.pid}\n`);
    fs.closeSync(fd);
    if (req.limits) writeAtomic(path.join(dir, LIMITS_FILE), JSON.stringify(req.limits) + '\n');
    if (req.serve) return this.launchServed(req, req.serve, dir, lock);
    const keep = req.limits ? mib(req.limits.logMb) + 1 : 0;
    let helperGone: SpawnServerExitedError | undefined;
    try {
      // Through the worker's spawn helper (spawn-server.ts): the worker itself never forks.
      await this.spawner.spawn({
        file: '/bin/sh',
        args: ['-c', LAUNCHER, 'flywheel-launch', dir, String(keep), ...req.argv],
        cwd: req.runDir,
        detached: true,
        // Only the job's own environment: the launcher's is readable from /proc by an unsandboxed trainer.
        env: req.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      });
    } catch (e) {
      if (!(e instanceof SpawnServerExitedError)) {
        // Refused: nothing was started, so the lock goes with the attempt.
        fs.rmSync(lock, { force: true });
        throw e;
      }
      // The helper died before answering: it may have started the launcher. Its pid file says; the lock stays.
      helperGone = e;
    }
    const pid = await waitForPid(dir, this.pidWaitMs);
    if (pid === undefined)
      throw new LauncherNotStartedError(
        `local backend: ${req.runId}: the launcher did not start (no pid after ${this.pidWaitMs} ms)${helperGone ? `: ${helperGone.message}` : ''}`,
        { cause: helperGone },
      );
    return this.handle(req, pid);
  }

  /** On a warm trainer: the pool records the launch (pid and all) before it returns, and the run's end when it comes. */
  private launchServed(req: LaunchRequest, serve: NonNullable<LaunchRequest['serve']>, dir: string, lock: string): JobHandle {
    let pid: number;
    try {
      pid = this.servers.serve(serve, req.runDir, dir, req.limits);
    } catch (e) {
      // Nothing was sent to a server: the lock goes with the attempt.
      fs.rmSync(lock, { force: true });
      throw e;
    }
    return this.handle(req, pid);
  }

  async status(handle: JobHandle): Promise<JobStatus> {
    const dir = launchDirOf(handle.runDir);
    const pgid = Number(handle.ref);
    const recorded = readBreach(dir);
    if (recorded) return this.endedByLimit(dir, pgid, recorded);
    const exit = readTrimmed(path.join(dir, EXIT_CODE_FILE));
    const cancelled = fs.existsSync(path.join(dir, CANCELLED_FILE));
    if (exit !== undefined) {
      // A trainer that wrote past its log cap dies of SIGPIPE (or exits on EPIPE): the cap is why, not its exit code.
      const limits = this.limitsOf(dir);
      const logs = limits && !cancelled ? logBreach(dir, limits) : undefined;
      if (logs) return this.stopForLimit(dir, pgid, logs);
      this.forget(dir);
      const exitCode = Number(exit);
      const trainerSeconds = trainerSecondsIn(dir);
      if (exitCode === 0) return { state: 'succeeded', exitCode, trainerSeconds };
      return { state: 'failed', exitCode, trainerSeconds, ...(cancelled ? { reason: 'cancelled' as const } : {}) };
    }
    const served = this.servedOf(dir);
    // A served run's pid is its server's: alive only while it is that server (the pid is not another's since).
    if (isAlive(pgid) && (!served || isServerOf(pgid, served))) {
      const limits = cancelled ? undefined : this.limitsOf(dir);
      // A served run writes in its server's folder until it ends: that is the folder to watch.
      const breach = limits ? this.watcher.check(dir, served?.runDir ?? handle.runDir, pgid, limits) : undefined;
      return breach ? this.stopForLimit(dir, pgid, breach) : { state: 'running' };
    }
    // Re-read: the launcher may have written its exit code between the two checks. A served run's end is written by
    // the worker that holds its server, just after the server's exit: a moment for it, when that worker is this one.
    if (served) await waitForFile(path.join(dir, EXIT_CODE_FILE), this.servedEndWaitMs);
    if (readTrimmed(path.join(dir, EXIT_CODE_FILE)) !== undefined) return this.status(handle);
    // The launcher died without recording an end (it was killed): nothing can record one now. What is left of the run
    // (its group: the trainer, the log caps) is stopped first, so a run is lost only once nothing of it writes, and
    // a follower that reads its metrics to the end reads them all.
    await this.killRemains(dir, pgid);
    // A served run's server died with its worker: what it wrote goes where any run's outputs are.
    if (served) await salvageServedRun(served.runDir, handle.runDir, this.limitsOf(dir));
    this.forget(dir);
    // A cancelled group dies with its launcher, before it can record an exit code.
    return cancelled ? { state: 'failed', reason: 'cancelled' } : { state: 'lost' };
  }

  /** A served run writes in its server's folder until its outputs are copied out (at its end, or when found lost). */
  liveRunDir(handle: JobHandle): string {
    const dir = launchDirOf(handle.runDir);
    const served = this.servedOf(dir);
    // Its folder is removed once copied out (at its end, or when found lost): from then on, the run directory.
    return served && readTrimmed(path.join(dir, EXIT_CODE_FILE)) === undefined && fs.existsSync(served.runDir)
      ? served.runDir
      : handle.runDir;
  }

  /** The launcher's exit code, written in the launch directory, is the end (backends/local/end-watch.ts). */
  watchEnd(handle: JobHandle, changed: () => void): (() => void) | undefined {
    return watchForFile(launchDirOf(handle.runDir), EXIT_CODE_FILE, changed);
  }

  async cancel(handle: JobHandle): Promise<void> {
    const pgid = Number(handle.ref);
    const dir = launchDirOf(handle.runDir);
    // A served run that has ended has nothing left to stop: its server serves another run now.
    if (this.servedAndEnded(dir)) return this.forget(dir);
    // Listed before the group is signalled: a trainer that left the group (setsid) is found as the launcher's descendant.
    const procs = processesOf(dir, pgid);
    if (groupMembers(pgid).length > 0) fs.writeFileSync(path.join(dir, CANCELLED_FILE), `${new Date().toISOString()}\n`);
    signalGroup(pgid, 'SIGTERM');
    signalEach(procs, 'SIGTERM');
    const deadline = Date.now() + this.killGraceMs;
    while ((groupMembers(pgid).length > 0 || procs.some(stillRunning)) && Date.now() < deadline) await sleep(50);
    signalGroup(pgid, 'SIGKILL');
    signalEach(procs, 'SIGKILL');
    while (groupMembers(pgid).length > 0) await sleep(20);
    // A served run's end (its outputs copied out) is written by its server's owner as the server exits.
    if (this.servedOf(dir)) await waitForFile(path.join(dir, EXIT_CODE_FILE), this.servedEndWaitMs);
    this.forget(dir);
  }

  async stderrTail(handle: JobHandle, lines = 20): Promise<string> {
    return tailFile(path.join(launchDirOf(handle.runDir), STDERR_LOG), lines);
  }

  /**
   * Ends a run past a limit: the breach is recorded first (a worker that dies here leaves a reattaching one the same
   * verdict), then everything of the run is killed at once: no grace, the limit is what it was spending.
   */
  private async stopForLimit(dir: string, pgid: number, breach: LimitBreach): Promise<JobStatus> {
    writeAtomic(path.join(dir, LIMIT_FILE), JSON.stringify(breach) + '\n');
    return this.endedByLimit(dir, pgid, breach);
  }

  /** Makes sure nothing of a run ended by a limit still runs, and reports it so. */
  private async endedByLimit(dir: string, pgid: number, breach: LimitBreach): Promise<JobStatus> {
    await this.killRemains(dir, pgid);
    this.forget(dir);
    const exit = Number(readTrimmed(path.join(dir, EXIT_CODE_FILE)));
    return { state: 'failed', reason: 'limit', limit: breach, ...(Number.isInteger(exit) ? { exitCode: exit } : {}) };
  }

  /** SIGKILLs whatever of the run still runs, with no grace, and waits (up to the kill grace) for it to go. */
  private async killRemains(dir: string, pgid: number): Promise<void> {
    if (this.servedAndEnded(dir)) return;
    const procs = processesOf(dir, pgid);
    if (procs.length === 0) return;
    signalGroup(pgid, 'SIGKILL');
    signalEach(procs, 'SIGKILL');
    const deadline = Date.now() + this.killGraceMs;
    while (procs.some(stillRunning) && Date.now() < deadline) await sleep(20);
  }

  /** Whether the run was served and its end is recorded: then its server is no longer its own. */
  private servedAndEnded(dir: string): boolean {
    return this.servedOf(dir) !== undefined && readTrimmed(path.join(dir, EXIT_CODE_FILE)) !== undefined;
  }

  private limitsOf(dir: string): ResourceLimits | undefined {
    let l = this.limits.get(dir);
    if (l === undefined) {
      const s = readTrimmed(path.join(dir, LIMITS_FILE));
      l = s === undefined ? null : (JSON.parse(s) as ResourceLimits);
      this.limits.set(dir, l);
    }
    return l ?? undefined;
  }

  /** Drops what this instance keeps about a run that has ended. */
  private forget(dir: string): void {
    this.limits.delete(dir);
    this.served.delete(dir);
    this.watcher.forget(dir);
  }

  /** The run's served.json, read once (written before its pid, never changed): status is polled every 25 ms to 1 s. */
  private servedOf(dir: string): ServedRecord | undefined {
    let r = this.served.get(dir);
    if (r === undefined) this.served.set(dir, (r = readServed(dir) ?? null));
    return r ?? undefined;
  }

  private handle(req: LaunchRequest, pid: number): JobHandle {
    return { backend: this.kind, runId: req.runId, runDir: req.runDir, ref: String(pid) };
  }
}

/** The run's processes now: its group, and its launcher's descendants while the launcher is still this run's. */
function processesOf(dir: string, pgid: number): Proc[] {
  return runProcesses(pgid, { descendants: isLauncherOf(pgid, dir) });
}

function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  signal(-pgid, sig);
}

/** Signals each process that is still the one listed (never a later process that reused its pid). */
function signalEach(procs: Proc[], sig: NodeJS.Signals): void {
  for (const p of procs) if (stillRunning(p)) signal(p.pid, sig);
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

function readBreach(dir: string): LimitBreach | undefined {
  const s = readTrimmed(path.join(dir, LIMIT_FILE));
  return s === undefined ? undefined : (JSON.parse(s) as LimitBreach);
}

function readPid(dir: string): number | undefined {
  const s = readTrimmed(path.join(dir, JOB_PID_FILE));
  const n = Number(s);
  return s !== undefined && Number.isInteger(n) && n > 0 ? n : undefined;
}

async function waitForFile(file: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fs.existsSync(file) && Date.now() < deadline) await sleep(20);
}

async function waitForPid(dir: string, ms: number): Promise<number | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const pid = readPid(dir);
    if (pid !== undefined || Date.now() > deadline) return pid;
    await sleep(5);
  }
}
