// The Slurm backend: the trainer runs as a batch job under a constant script that records its start, end and exit
// code in the run's launch directory (`<runDir>.launch`, which the trainer's sandbox never shows it). The job's name
// is derived from the run id, and its id is written to the launch directory, so a retried launch or a new worker
// finds the job it already submitted instead of submitting a second one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ENDED_AT_FILE,
  EXIT_CODE_FILE,
  LAUNCH_LOCK as LOCK_FILE,
  LAUNCHES_LOG,
  STARTED_AT_FILE,
  STDERR_LOG,
  STDOUT_LOG,
} from '../../core/contract-files';
import { mib } from '../../core/resource-limits';
import type { JobHandle, JobStatus, LaunchRequest, TrainingBackend } from '../backend';
import { isAlive } from '../local/process-liveness';
import { jobsNamed, requeue, sbatch, scancel, showJob, type SlurmCommandOptions, type SlurmJobInfo } from './slurm-commands';
import { launchDirOf, makeLaunchDir, readTrimmed, tailFile, trainerSecondsIn, writeAtomic } from '../run-dir-files';

/**
 * The batch script, the same for every job: $1 is the launch directory, $2 the bytes of each log to keep (0: no
 * cap), and the trainer's argv arrives as the rest ("$@"), never interpolated. It runs the trainer as a child (not
 * `exec`) so it can record the exit code; on SIGTERM (scancel, a time limit, a requeue) it passes the signal on and
 * still records how the trainer ended. With a cap, the trainer's stdout and stderr go through FIFOs to `head -c`,
 * which stops after the cap (the trainer's next write gets SIGPIPE): a pipeline would hide the trainer's pid from the
 * trap. A requeued job runs this script again, which clears the previous attempt's end record first; each attempt
 * appends to the logs, so each gets its own cap.
 */
export const BATCH_SCRIPT = [
  '#!/bin/sh',
  '# Flywheel Slurm batch script: $1 is the launch directory, $2 the bytes of each log to keep, the rest is the trainer argv.',
  'd=$1; keep=$2; shift 2',
  `rm -f "$d/${EXIT_CODE_FILE}" "$d/${ENDED_AT_FILE}"`,
  `echo "\${SLURM_JOB_ID:-?} \${SLURM_RESTART_COUNT:-0} $(hostname)" >> "$d/${LAUNCHES_LOG}"`,
  `date +%s.%N > "$d/${STARTED_AT_FILE}"`,
  'o=; e=',
  'if [ "$keep" -gt 0 ]; then',
  '  rm -f "$d/stdout.fifo" "$d/stderr.fifo"; mkfifo -m 600 "$d/stdout.fifo" "$d/stderr.fifo"',
  `  head -c "$keep" < "$d/stdout.fifo" >> "$d/${STDOUT_LOG}" & o=$!`,
  `  head -c "$keep" < "$d/stderr.fifo" >> "$d/${STDERR_LOG}" & e=$!`,
  '  "$@" < /dev/null > "$d/stdout.fifo" 2> "$d/stderr.fifo" &',
  'else',
  '  "$@" < /dev/null &',
  'fi',
  'child=$!',
  "trap 'kill -TERM $child 2>/dev/null' TERM INT",
  'wait $child; code=$?',
  '# wait returns early when a trapped signal arrives: wait again until the trainer has really ended.',
  'while kill -0 $child 2>/dev/null; do wait $child; code=$?; done',
  '# The log readers end once the last writer has closed: wait, so what they kept is written before the job ends.',
  'if [ -n "$o" ]; then wait $o $e; rm -f "$d/stdout.fifo" "$d/stderr.fifo"; fi',
  `date +%s.%N > "$d/${ENDED_AT_FILE}"`,
  `echo $code > "$d/${EXIT_CODE_FILE}"`,
  'exit $code',
  '',
].join('\n');

const SCRIPT_FILE = 'slurm-job.sh';
const JOB_ID_FILE = 'slurm_job_id';

/** Slurm states in which the job will still run (or is running): all map to `running`. */
const ACTIVE = new Set([
  'PENDING',
  'RUNNING',
  'CONFIGURING',
  'COMPLETING',
  'REQUEUED',
  'REQUEUE_FED',
  'REQUEUE_HOLD',
  'RESIZING',
  'SUSPENDED',
  'SIGNALING',
  'STAGE_OUT',
  'STOPPED',
]);
/** States that mean the machine went away under the job: a resume, never a new experiment. */
const INTERRUPTED = new Set(['PREEMPTED', 'NODE_FAIL']);

/** The resources each job asks for; the spec's `backend.slurm` block. Unset fields take the cluster's defaults. */
export interface SlurmResources {
  /** @default 1 */
  nodes?: number;
  /** GPUs per node, as `--gres=gpu:N`; 0 asks for none. @default 0 */
  gpusPerNode?: number;
  /** @default 1 */
  cpusPerTask?: number;
  /** Memory per node in MB (`--mem`). @default the partition's default */
  memMb?: number;
  /** Wall-clock limit; Slurm ends the job as TIMEOUT past it. @default the partition's limit */
  timeLimitMinutes?: number;
  /** @default the cluster's default partition */
  partition?: string;
  /** @default the user's default account */
  account?: string;
}

export interface SlurmBackendOptions extends SlurmResources, SlurmCommandOptions {
  /** Least time between two questions to slurmctld about one job; status() answers from the last reply in between. @default 1000 */
  statusIntervalMs?: number;
  /** How long a second launcher waits for the first one's job id before looking for the job itself. @default 30000 */
  lockWaitMs?: number;
  /** How long cancel() waits for the job to leave the queue. @default 120000 */
  cancelWaitMs?: number;
}

type Resolved = Required<Omit<SlurmBackendOptions, 'memMb' | 'timeLimitMinutes' | 'partition' | 'account'>> &
  Pick<SlurmBackendOptions, 'memMb' | 'timeLimitMinutes' | 'partition' | 'account'>;

function withDefaults(o: SlurmBackendOptions): Resolved {
  return {
    ...o,
    nodes: o.nodes ?? 1,
    gpusPerNode: o.gpusPerNode ?? 0,
    cpusPerTask: o.cpusPerTask ?? 1,
    timeoutMs: o.timeoutMs ?? 30_000,
    statusIntervalMs: o.statusIntervalMs ?? 1000,
    lockWaitMs: o.lockWaitMs ?? 30_000,
    cancelWaitMs: o.cancelWaitMs ?? 120_000,
  };
}

/** The job name for a run: `fw-` + 12 hex of sha256(runId) + a readable tail of the run id. Deterministic. */
export function jobNameOf(runId: string): string {
  const hash = crypto.createHash('sha256').update(runId).digest('hex').slice(0, 12);
  const slug = runId.replace(/[^A-Za-z0-9._-]+/g, '_').slice(-40);
  return `fw-${hash}-${slug}`;
}

export class SlurmBackend implements TrainingBackend {
  readonly kind = 'slurm';
  private readonly o: Resolved;
  private readonly lastStatus = new Map<string, { at: number; status: JobStatus }>();

  constructor(opts: SlurmBackendOptions = {}) {
    this.o = withDefaults(opts);
  }

  async launch(req: LaunchRequest): Promise<JobHandle> {
    fs.mkdirSync(req.runDir, { recursive: true });
    const dir = makeLaunchDir(req.runDir);
    const recorded = readJobId(dir);
    if (recorded !== undefined) return this.handle(req, recorded);
    // The lock makes two concurrent launches of one run (a retry racing a slow first attempt) submit one job.
    const lock = path.join(dir, LOCK_FILE);
    let fd: number;
    try {
      fd = fs.openSync(lock, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      return this.afterLockHeld(req, lock);
    }
    try {
      fs.writeSync(fd, `${os.hostname()} ${process.pid}\n`);
    } finally {
      fs.closeSync(fd);
    }
    // A launcher that died between sbatch and writing the id left a job Slurm knows by name: adopt it.
    const existing = await this.findByName(req);
    if (existing !== undefined) return this.record(req, existing);

    const script = path.join(dir, SCRIPT_FILE);
    fs.writeFileSync(script, BATCH_SCRIPT, { mode: 0o755 });
    const keep = req.limits ? mib(req.limits.logMb) + 1 : 0;
    const jobId = await sbatch(this.sbatchOptions(req), script, [dir, String(keep), ...req.argv], {
      timeoutMs: this.o.timeoutMs,
      env: process.env,
    });
    return this.record(req, jobId);
  }

  async status(handle: JobHandle): Promise<JobStatus> {
    // The batch script's record of a clean exit is final (it is removed when a requeued job starts again): no need
    // to wait for the controller to notice, or for the cache. Other endings still ask Slurm, which knows why.
    const dir = launchDirOf(handle.runDir);
    if (readTrimmed(path.join(dir, EXIT_CODE_FILE)) === '0')
      return { state: 'succeeded', exitCode: 0, trainerSeconds: trainerSecondsIn(dir) };
    const cached = this.lastStatus.get(handle.ref);
    if (cached && Date.now() - cached.at < this.o.statusIntervalMs) return cached.status;
    const status = await this.queryStatus(handle);
    this.lastStatus.set(handle.ref, { at: Date.now(), status });
    return status;
  }

  async cancel(handle: JobHandle): Promise<void> {
    this.lastStatus.delete(handle.ref);
    const before = await showJob(handle.ref, this.o);
    if (before === undefined || !ACTIVE.has(before.state)) return;
    await scancel(handle.ref, this.o);
    const deadline = Date.now() + this.o.cancelWaitMs;
    for (;;) {
      const job = await showJob(handle.ref, this.o);
      if (job === undefined || !ACTIVE.has(job.state)) return;
      if (Date.now() > deadline)
        throw new Error(`slurm backend: job ${handle.ref} is still ${job.state} ${this.o.cancelWaitMs} ms after scancel`);
      await sleep(250);
    }
  }

  async stderrTail(handle: JobHandle, lines = 20): Promise<string> {
    return tailFile(path.join(launchDirOf(handle.runDir), STDERR_LOG), lines);
  }

  private async queryStatus(handle: JobHandle): Promise<JobStatus> {
    const job = await showJob(handle.ref, this.o);
    // A controller whose state was wiped reuses job ids: a job under another name is not this run's.
    const dir = launchDirOf(handle.runDir);
    if (job === undefined || job.jobName !== jobNameOf(handle.runId)) return fromExitRecord(dir);
    const seconds = trainerSecondsIn(dir);
    if (ACTIVE.has(job.state)) return { state: 'running' };
    if (INTERRUPTED.has(job.state)) {
      // JobRequeue=1 makes Slurm requeue these itself; a cluster that does not gets the same from us.
      await requeue(handle.ref, this.o);
      return { state: 'running', reason: 'preempted' };
    }
    const exitCode = exitCodeOf(job);
    switch (job.state) {
      case 'COMPLETED':
        return { state: 'succeeded', exitCode: 0, trainerSeconds: seconds };
      case 'TIMEOUT':
      case 'DEADLINE':
        return { state: 'failed', exitCode, reason: 'timeout', trainerSeconds: seconds };
      case 'CANCELLED':
        return { state: 'failed', exitCode, reason: 'cancelled', trainerSeconds: seconds };
      default:
        // FAILED, OUT_OF_MEMORY, BOOT_FAIL and anything newer: the trainer did not finish its work.
        return { state: 'failed', exitCode, trainerSeconds: seconds };
    }
  }

  private sbatchOptions(req: LaunchRequest): string[] {
    const o = this.o;
    // '%' starts a Slurm file-name pattern (%j); '%%' is a literal one. The logs are the launch directory's.
    const file = (name: string) => path.join(launchDirOf(req.runDir), name).replace(/%/g, '%%');
    const args = [
      `--job-name=${jobNameOf(req.runId)}`,
      `--chdir=${req.runDir}`,
      `--output=${file(STDOUT_LOG)}`,
      `--error=${file(STDERR_LOG)}`,
      '--open-mode=append',
      '--requeue',
      // The job gets none of the worker's environment (its secrets): the trainer's comes from its argv (sandbox).
      '--export=NONE',
      `--nodes=${o.nodes}`,
      `--cpus-per-task=${o.cpusPerTask}`,
    ];
    if (o.gpusPerNode > 0) args.push(`--gres=gpu:${o.gpusPerNode}`);
    if (o.memMb !== undefined) args.push(`--mem=${o.memMb}M`);
    if (o.timeLimitMinutes !== undefined) args.push(`--time=${o.timeLimitMinutes}`);
    if (o.partition) args.push(`--partition=${o.partition}`);
    if (o.account) args.push(`--account=${o.account}`);
    return args;
  }

  /** Another launcher holds the lock: wait for its job id, else find the job by name, else take over a dead lock. */
  private async afterLockHeld(req: LaunchRequest, lock: string): Promise<JobHandle> {
    const deadline = Date.now() + this.o.lockWaitMs;
    const dir = launchDirOf(req.runDir);
    while (Date.now() < deadline) {
      const id = readJobId(dir);
      if (id !== undefined) return this.handle(req, id);
      await sleep(50);
    }
    const found = await this.findByName(req);
    if (found !== undefined) return this.record(req, found);
    const holder = readTrimmed(lock)?.split(' ');
    if (holder && holder[0] === os.hostname() && isAlive(Number(holder[1]))) {
      throw new Error(`slurm backend: ${req.runId}: launch still in progress in pid ${holder[1]} after ${this.o.lockWaitMs} ms`);
    }
    // The launcher that took the lock died before submitting: nothing was submitted, so take over.
    fs.rmSync(lock, { force: true });
    return this.launch(req);
  }

  /** A job Slurm knows under this run's name whose working directory is this run's (another install may share names). */
  private async findByName(req: LaunchRequest): Promise<string | undefined> {
    const jobs = (await jobsNamed(jobNameOf(req.runId), this.o)).filter((j) => path.resolve(j.workDir) === path.resolve(req.runDir));
    if (jobs.length === 0) return undefined;
    const live = jobs.filter((j) => ACTIVE.has(j.state));
    const pick = (live.length > 0 ? live : jobs).sort((a, b) => Number(b.jobId) - Number(a.jobId))[0];
    return pick.jobId;
  }

  private record(req: LaunchRequest, jobId: string): JobHandle {
    writeAtomic(path.join(launchDirOf(req.runDir), JOB_ID_FILE), `${jobId}\n`);
    return this.handle(req, jobId);
  }

  private handle(req: LaunchRequest, jobId: string): JobHandle {
    return { backend: this.kind, runId: req.runId, runDir: req.runDir, ref: jobId };
  }
}

/** The trainer's own exit code when the batch script recorded one, else Slurm's (128 + signal when killed). */
function exitCodeOf(job: SlurmJobInfo): number {
  if (job.signal > 0 && job.exitCode === 0) return 128 + job.signal;
  return job.exitCode;
}

/** Slurm has forgotten the job: the batch script's end record is the only witness left. */
function fromExitRecord(launchDir: string): JobStatus {
  const exit = readTrimmed(path.join(launchDir, EXIT_CODE_FILE));
  if (exit === undefined) return { state: 'lost' };
  const exitCode = Number(exit);
  return { state: exitCode === 0 ? 'succeeded' : 'failed', exitCode, trainerSeconds: trainerSecondsIn(launchDir) };
}

function readJobId(launchDir: string): string | undefined {
  const s = readTrimmed(path.join(launchDir, JOB_ID_FILE));
  return s !== undefined && /^\d+$/.test(s) ? s : undefined;
}
