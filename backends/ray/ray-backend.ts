// The Ray backend: each run is a Ray job submitted through the Jobs HTTP API under a submission id derived from the
// run id, so a retried launch or a new worker finds the job instead of submitting a second one. The entrypoint is a
// constant launcher in the run's launch directory (`<runDir>.launch`, on the filesystem shared with the Ray nodes)
// that reads the trainer's argv from a JSON file there and records start, end, exit code and logs there: nothing
// the trainer writes in its run directory is read back as a record. A job whose driver died without that record is
// resubmitted in the same run directory (`<id>-r2`, …), and the trainer resumes from its newest checkpoint.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EXIT_CODE_FILE, LAUNCHES_LOG, STDERR_LOG } from '../../core/contract-files';
import type { JobHandle, JobStatus, LaunchRequest, TrainingBackend } from '../backend';
import { launchDirOf, makeLaunchDir, readTrimmed, tailFile, trainerSecondsIn, writeAtomic } from '../run-dir-files';
import {
  ACTIVE_RAY_STATES,
  RayJobExistsError,
  RayJobsClient,
  resolveAddress,
  type RayJobInfo,
  type RaySubmitRequest,
} from './ray-jobs-client';

const LAUNCHER_SOURCE = path.join(__dirname, 'ray-launcher.py');
const LAUNCHER_FILE = 'ray-launcher.py';
const ARGV_FILE = 'ray-argv.json';
/** The first submission (address and request), kept so any worker can resubmit it as a resume. */
const SUBMISSION_FILE = 'ray-submission.json';
const SUBMISSION_ID_FILE = 'ray_submission_id';
/** The current attempt: 1 for the first submission, n for `<id>-r<n>`. */
const ATTEMPT_FILE = 'ray-attempt';

/** What each job asks Ray for; the spec's `backend.ray` block. */
export interface RayResources {
  /** The Jobs API (the head's dashboard). @default process.env.RAY_ADDRESS, else http://127.0.0.1:8265 */
  address?: string;
  /** CPUs reserved for the entrypoint (`entrypoint_num_cpus`). @default 1 */
  numCpus?: number;
  /** GPUs reserved for the entrypoint (`entrypoint_num_gpus`). @default 0 */
  numGpus?: number;
  /** Ray's runtime_env for the job, passed as is (`env_vars`, `pip`, `conda`, …). @default none */
  runtimeEnv?: Record<string, unknown>;
}

export interface RayBackendOptions extends RayResources {
  /** Per-request limit for the Jobs API. @default 30000 */
  timeoutMs?: number;
  /** Least time between two questions to the head about one job; status() answers from the last reply in between. @default 1000 */
  statusIntervalMs?: number;
  /** Resubmissions after driver deaths before the run is given up as lost. @default 3 */
  maxResumes?: number;
  /** How long cancel() waits for the job to reach a final state. @default 60000 */
  cancelWaitMs?: number;
}

type Resolved = Required<Omit<RayBackendOptions, 'address' | 'runtimeEnv'>> & Pick<RayBackendOptions, 'address' | 'runtimeEnv'>;

function withDefaults(o: RayBackendOptions): Resolved {
  return {
    ...o,
    numCpus: o.numCpus ?? 1,
    numGpus: o.numGpus ?? 0,
    timeoutMs: o.timeoutMs ?? 30_000,
    statusIntervalMs: o.statusIntervalMs ?? 1000,
    maxResumes: o.maxResumes ?? 3,
    cancelWaitMs: o.cancelWaitMs ?? 60_000,
  };
}

interface SubmissionRecord {
  address: string;
  request: RaySubmitRequest;
}

/** The submission id for a run: `fw-` + 12 hex of sha256(runId) + a readable tail of the run id. Deterministic. */
export function submissionIdOf(runId: string): string {
  const hash = crypto.createHash('sha256').update(runId).digest('hex').slice(0, 12);
  const slug = runId.replace(/[^A-Za-z0-9._-]+/g, '_').slice(-40);
  return `fw-${hash}-${slug}`;
}

/** The submission id of attempt n: the first is the run's own id, a resume adds `-r<n>`. */
export function attemptIdOf(base: string, attempt: number): string {
  return attempt <= 1 ? base : `${base}-r${attempt}`;
}

/** A POSIX-shell single-quoted word: the only way a run directory path enters the entrypoint. */
export function shellQuote(s: string): string {
  if (s.includes('\0')) throw new Error('ray backend: a path with a NUL byte cannot be passed to a shell');
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The constant entrypoint: the launcher in the launch dir, given the run dir and the launch dir. */
export function entrypointOf(runDir: string): string {
  const dir = launchDirOf(runDir);
  return `exec python3 ${shellQuote(path.join(dir, LAUNCHER_FILE))} ${shellQuote(runDir)} ${shellQuote(dir)}`;
}

export class RayBackend implements TrainingBackend {
  readonly kind = 'ray';
  private readonly o: Resolved;
  private readonly clients = new Map<string, RayJobsClient>();
  private readonly lastStatus = new Map<string, { at: number; status: JobStatus }>();

  constructor(opts: RayBackendOptions = {}) {
    this.o = withDefaults(opts);
  }

  async launch(req: LaunchRequest): Promise<JobHandle> {
    fs.mkdirSync(req.runDir, { recursive: true });
    const dir = makeLaunchDir(req.runDir);
    const recorded = readTrimmed(path.join(dir, SUBMISSION_ID_FILE));
    if (recorded !== undefined) return this.handle(req, recorded);
    const id = submissionIdOf(req.runId);
    const client = this.client(this.o.address);
    // A launcher that died between submitting and recording the id left a job Ray knows by that id: adopt it.
    const existing = await client.get(id);
    if (existing !== undefined) return this.adopt(req, existing);

    // Every file is written whole and is the same for two racing launchers: Ray's submission id decides who submits.
    // The launcher gives the trainer this env and, of the driver's own, only the runtime_env's variables (and CUDA's).
    const keep = Object.keys((this.o.runtimeEnv as { env_vars?: Record<string, string> } | undefined)?.env_vars ?? {});
    writeAtomic(path.join(dir, ARGV_FILE), JSON.stringify({ argv: req.argv, env: req.env ?? {}, keep }));
    writeAtomic(path.join(dir, LAUNCHER_FILE), fs.readFileSync(LAUNCHER_SOURCE, 'utf8'));
    const request: RaySubmitRequest = {
      entrypoint: entrypointOf(req.runDir),
      submission_id: id,
      entrypoint_num_cpus: this.o.numCpus,
      entrypoint_num_gpus: this.o.numGpus,
      metadata: { flywheel_run_id: req.runId, flywheel_run_dir: req.runDir, flywheel_attempt: '1' },
    };
    if (this.o.runtimeEnv !== undefined) request.runtime_env = this.o.runtimeEnv;
    writeAtomic(path.join(dir, SUBMISSION_FILE), JSON.stringify({ address: client.address, request } satisfies SubmissionRecord, null, 2));
    try {
      await client.submit(request);
    } catch (e) {
      if (!(e instanceof RayJobExistsError)) throw e;
      const raced = await client.get(id);
      if (raced === undefined) throw e;
      return this.adopt(req, raced);
    }
    return this.record(req, id);
  }

  async status(handle: JobHandle): Promise<JobStatus> {
    const cached = this.lastStatus.get(handle.ref);
    if (cached && Date.now() - cached.at < this.o.statusIntervalMs) return cached.status;
    const status = await this.queryStatus(handle);
    this.lastStatus.set(handle.ref, { at: Date.now(), status });
    return status;
  }

  async cancel(handle: JobHandle): Promise<void> {
    this.lastStatus.delete(handle.ref);
    const client = this.clientFor(handle);
    const id = attemptIdOf(handle.ref, attemptOf(launchDirOf(handle.runDir)));
    const before = await client.get(id);
    if (before === undefined || !ACTIVE_RAY_STATES.has(before.status)) return;
    await client.stop(id);
    const deadline = Date.now() + this.o.cancelWaitMs;
    for (;;) {
      const job = await client.get(id);
      if (job === undefined || !ACTIVE_RAY_STATES.has(job.status)) return;
      if (Date.now() > deadline)
        throw new Error(`ray backend: job ${id} is still ${job.status} ${this.o.cancelWaitMs} ms after it was stopped`);
      await sleep(200);
    }
  }

  /** The trainer's stderr from the run dir; Ray's own log of the job when the trainer never wrote any (it did not start). */
  async stderrTail(handle: JobHandle, lines = 20): Promise<string> {
    const dir = launchDirOf(handle.runDir);
    const tail = tailFile(path.join(dir, STDERR_LOG), lines);
    if (tail !== '') return tail;
    try {
      const logs = await this.clientFor(handle).logs(attemptIdOf(handle.ref, attemptOf(dir)));
      return logs.trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  private async queryStatus(handle: JobHandle): Promise<JobStatus> {
    const dir = launchDirOf(handle.runDir);
    const attempt = attemptOf(dir);
    const id = attemptIdOf(handle.ref, attempt);
    const job = await this.clientFor(handle).get(id);
    // A head that restarted without persistent state forgets its jobs: the launcher's end record is the only witness.
    if (job === undefined) return fromExitRecord(dir);
    const seconds = trainerSecondsIn(dir);
    const exit = exitRecord(dir);
    switch (job.status) {
      case 'PENDING':
      case 'RUNNING':
        return attempt > 1 ? { state: 'running', reason: 'preempted' } : { state: 'running' };
      case 'SUCCEEDED':
        return { state: 'succeeded', exitCode: 0, trainerSeconds: seconds };
      case 'STOPPED':
        return { state: 'failed', exitCode: exit ?? job.driver_exit_code ?? undefined, reason: 'cancelled', trainerSeconds: seconds };
      default:
        if (exit !== undefined) return { state: exit === 0 ? 'succeeded' : 'failed', exitCode: exit, trainerSeconds: seconds };
        return this.resume(handle, attempt, job);
    }
  }

  /**
   * The job failed and the launcher recorded no exit: the driver died under the trainer (killed, its node lost), not
   * the trainer's own failure. Submit the next attempt in the same run dir; the trainer resumes from its checkpoint.
   */
  private async resume(handle: JobHandle, attempt: number, job: RayJobInfo): Promise<JobStatus> {
    const dir = launchDirOf(handle.runDir);
    const started = launchesOf(dir).some((l) => l.split(' ')[0] === job.submission_id);
    // The launcher never ran (a runtime_env that cannot be built, no python3 on the node): resubmitting cannot help.
    if (!started) return { state: 'failed', exitCode: job.driver_exit_code ?? undefined };
    if (attempt > this.o.maxResumes) return { state: 'lost' };
    const first = JSON.parse(fs.readFileSync(path.join(dir, SUBMISSION_FILE), 'utf8')) as SubmissionRecord;
    const next = attempt + 1;
    const id = attemptIdOf(handle.ref, next);
    try {
      await this.clientFor(handle).submit({
        ...first.request,
        submission_id: id,
        metadata: { ...first.request.metadata, flywheel_attempt: String(next) },
      });
    } catch (e) {
      // Another worker resumed the same job first: the same deterministic id, so it is this resume.
      if (!(e instanceof RayJobExistsError)) throw e;
    }
    writeAtomic(path.join(dir, ATTEMPT_FILE), `${next}\n`);
    return { state: 'running', reason: 'preempted' };
  }

  /** A job Ray holds under this run's id must be this run's (another install may share run ids): same run dir. */
  private adopt(req: LaunchRequest, job: RayJobInfo): JobHandle {
    const dir = job.metadata?.flywheel_run_dir;
    if (dir !== undefined && path.resolve(dir) !== path.resolve(req.runDir)) {
      throw new Error(`ray backend: ${req.runId}: submission id ${job.submission_id} belongs to a job in another run dir (${dir})`);
    }
    return this.record(req, job.submission_id);
  }

  private record(req: LaunchRequest, id: string): JobHandle {
    writeAtomic(path.join(launchDirOf(req.runDir), SUBMISSION_ID_FILE), `${id}\n`);
    return this.handle(req, id);
  }

  private handle(req: LaunchRequest, id: string): JobHandle {
    return { backend: this.kind, runId: req.runId, runDir: req.runDir, ref: id };
  }

  /** The head the job was submitted to (recorded in the launch dir), so a worker built without options still finds it. */
  private clientFor(handle: JobHandle): RayJobsClient {
    let address = this.o.address;
    try {
      address = (JSON.parse(fs.readFileSync(path.join(launchDirOf(handle.runDir), SUBMISSION_FILE), 'utf8')) as SubmissionRecord).address;
    } catch {
      /* no record: this backend's address */
    }
    return this.client(address);
  }

  private client(address: string | undefined): RayJobsClient {
    const key = resolveAddress(address);
    let c = this.clients.get(key);
    if (!c) {
      c = new RayJobsClient({ address: key, timeoutMs: this.o.timeoutMs });
      this.clients.set(key, c);
    }
    return c;
  }
}

/** The attempt recorded in the launch dir: 1 until a resume. */
function attemptOf(launchDir: string): number {
  const n = Number(readTrimmed(path.join(launchDir, ATTEMPT_FILE)));
  return Number.isInteger(n) && n > 1 ? n : 1;
}

function launchesOf(launchDir: string): string[] {
  return (readTrimmed(path.join(launchDir, LAUNCHES_LOG)) ?? '').split('\n').filter(Boolean);
}

function exitRecord(launchDir: string): number | undefined {
  const s = readTrimmed(path.join(launchDir, EXIT_CODE_FILE));
  return s === undefined ? undefined : Number(s);
}

function fromExitRecord(launchDir: string): JobStatus {
  const exitCode = exitRecord(launchDir);
  if (exitCode === undefined) return { state: 'lost' };
  return { state: exitCode === 0 ? 'succeeded' : 'failed', exitCode, trainerSeconds: trainerSecondsIn(launchDir) };
}
