// The local backend: the trainer runs as a detached process group in its own run directory, under a tiny
// POSIX-sh launcher that records its pid, start and end times and exit code in files there. Files, not the
// worker's memory, are the truth, so a new worker process reattaches to a job an old one launched.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { JobHandle, JobStatus, LaunchRequest, TrainingBackend } from '../backend';
import { groupMembers, isAlive } from './process-liveness';
import { readTrimmed } from '../run-dir-files';

// A constant script: the trainer's argv arrives as positional parameters ("$@"), never interpolated.
const LAUNCHER = [
  'd=$1; shift',
  'echo $$ >> "$d/launches.log"',
  'echo $$ > "$d/job.pid"',
  'date +%s.%N > "$d/started_at"',
  '"$@" >> "$d/stdout.log" 2>> "$d/stderr.log" < /dev/null',
  'code=$?',
  'date +%s.%N > "$d/ended_at"',
  'echo $code > "$d/exit_code"',
].join('\n');

/** Written by cancel(), so a job killed on purpose reads as cancelled rather than lost. */
const CANCELLED_FILE = 'cancelled';

export interface LocalBackendOptions {
  /** How long to wait for a launched job to record its pid. @default 10000 */
  pidWaitMs?: number;
  /** Grace between SIGTERM and SIGKILL on cancel. @default 5000 */
  killGraceMs?: number;
}

export class LocalBackend implements TrainingBackend {
  readonly kind = 'local';
  private readonly pidWaitMs: number;
  private readonly killGraceMs: number;

  constructor(opts: LocalBackendOptions = {}) {
    this.pidWaitMs = opts.pidWaitMs ?? 10_000;
    this.killGraceMs = opts.killGraceMs ?? 5_000;
  }

  async launch(req: LaunchRequest): Promise<JobHandle> {
    fs.mkdirSync(req.runDir, { recursive: true });
    const existing = readPid(req.runDir);
    if (existing !== undefined) return this.handle(req, existing);
    // The lock makes two concurrent launches of one run (a retry racing a slow first attempt) start one process.
    const lock = path.join(req.runDir, 'launch.lock');
    let fd: number;
    try {
      fd = fs.openSync(lock, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = await waitForPid(req.runDir, this.pidWaitMs);
      if (pid !== undefined) return this.handle(req, pid);
      // The launcher that took the lock died before spawning: nothing runs, so take over.
      fs.rmSync(lock, { force: true });
      return this.launch(req);
    }
    fs.writeSync(fd, `${process.pid}\n`);
    fs.closeSync(fd);
    const child = spawn('/bin/sh', ['-c', LAUNCHER, 'flywheel-launch', req.runDir, ...req.argv], {
      cwd: req.runDir,
      detached: true,
      stdio: 'ignore',
      // Only the job's own environment: the launcher's is readable from /proc by an unsandboxed trainer.
      env: req.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    child.unref();
    const pid = await waitForPid(req.runDir, this.pidWaitMs);
    if (pid === undefined) throw new Error(`local backend: ${req.runId}: the launcher did not start (no pid after ${this.pidWaitMs} ms)`);
    return this.handle(req, pid);
  }

  async status(handle: JobHandle): Promise<JobStatus> {
    const exit = readTrimmed(path.join(handle.runDir, 'exit_code'));
    const cancelled = fs.existsSync(path.join(handle.runDir, CANCELLED_FILE));
    if (exit !== undefined) {
      const exitCode = Number(exit);
      if (exitCode === 0) return { state: 'succeeded', exitCode, trainerSeconds: trainerSeconds(handle.runDir) };
      return {
        state: 'failed',
        exitCode,
        trainerSeconds: trainerSeconds(handle.runDir),
        ...(cancelled ? { reason: 'cancelled' as const } : {}),
      };
    }
    if (isAlive(Number(handle.ref))) return { state: 'running' };
    // Re-read: the launcher may have written its exit code between the two checks.
    const late = readTrimmed(path.join(handle.runDir, 'exit_code'));
    if (late !== undefined) return this.status(handle);
    // A cancelled group dies with its launcher, before it can record an exit code.
    return cancelled ? { state: 'failed', reason: 'cancelled' } : { state: 'lost' };
  }

  async cancel(handle: JobHandle): Promise<void> {
    const pgid = Number(handle.ref);
    if (groupMembers(pgid).length > 0) fs.writeFileSync(path.join(handle.runDir, CANCELLED_FILE), `${new Date().toISOString()}\n`);
    signalGroup(pgid, 'SIGTERM');
    const deadline = Date.now() + this.killGraceMs;
    while (groupMembers(pgid).length > 0 && Date.now() < deadline) await sleep(50);
    if (groupMembers(pgid).length > 0) signalGroup(pgid, 'SIGKILL');
    while (groupMembers(pgid).length > 0) await sleep(20);
  }

  async stderrTail(handle: JobHandle, lines = 20): Promise<string> {
    return tailFile(path.join(handle.runDir, 'stderr.log'), lines);
  }

  private handle(req: LaunchRequest, pid: number): JobHandle {
    return { backend: this.kind, runId: req.runId, runDir: req.runDir, ref: String(pid) };
  }
}

function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* already gone */
  }
}

function readPid(runDir: string): number | undefined {
  const s = readTrimmed(path.join(runDir, 'job.pid'));
  const n = Number(s);
  return s !== undefined && Number.isInteger(n) && n > 0 ? n : undefined;
}

async function waitForPid(runDir: string, ms: number): Promise<number | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const pid = readPid(runDir);
    if (pid !== undefined || Date.now() > deadline) return pid;
    await sleep(5);
  }
}

function trainerSeconds(runDir: string): number | undefined {
  const a = Number(readTrimmed(path.join(runDir, 'started_at')));
  const b = Number(readTrimmed(path.join(runDir, 'ended_at')));
  return Number.isFinite(a) && Number.isFinite(b) && b >= a ? b - a : undefined;
}

/** The last `lines` lines of a file, reading at most its last 64 KB. */
export function tailFile(file: string, lines: number): string {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    const size = fs.fstatSync(fd).size;
    const len = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - len);
    return buf.toString('utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } finally {
    fs.closeSync(fd);
  }
}
