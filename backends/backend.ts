// The one interface every training backend implements (local process today; Slurm, Ray, Kubernetes beside it).
import type { JobHandle } from '../contracts/job-handle';
import type { LimitBreach, ResourceLimits } from '../core/resource-limits';
import type { ServeRequest } from './local/train-servers';

export type { JobHandle };
// A launch is idempotent per run id: asking twice returns the same job, never a second one.

export type JobState = 'running' | 'succeeded' | 'failed' | 'lost';

export interface JobStatus {
  state: JobState;
  exitCode?: number;
  /** Seconds the trainer itself ran, when the backend knows its start and end. */
  trainerSeconds?: number;
  /**
   * Why the scheduler, not the trainer, ended or interrupted the job: `timeout` (its time limit), `cancelled`
   * (cancelled outside Flywheel), `preempted` (requeued; the trainer resumes from its newest checkpoint), `limit` (the
   * backend ended it past one of its LaunchRequest.limits: `limit` says which).
   */
  reason?: 'timeout' | 'cancelled' | 'preempted' | 'limit';
  /** With `reason: 'limit'`: the limit and what was seen. */
  limit?: LimitBreach;
}

export interface LaunchRequest {
  runId: string;
  /** Holds run.json; the trainer writes metrics.jsonl and checkpoints/ there. */
  runDir: string;
  /** The trainer's argv: program and arguments as data, never a shell string. */
  argv: string[];
  /**
   * The job's whole environment (core/trainer-environment.ts builds it from an allow-list): a backend adds nothing
   * of the worker's own, whose variables hold Flywheel's secrets. @default PATH only
   */
  env?: Record<string, string>;
  /** The campaign the run belongs to (a label on cluster objects). */
  campaignId?: string;
  /** The run's wall-clock limit, for backends that enforce one themselves (a Kubernetes Job's activeDeadlineSeconds). */
  timeLimitSeconds?: number;
  /**
   * The run's resource limits (core/resource-limits.ts), resolved. The kernel's share (memory, processes, open files,
   * file size) is already in the argv (backends/sandbox); a backend that can watch the run enforces the rest (resident
   * memory, bytes and files in the run directory, log bytes) and reports a breach as `reason: 'limit'`.
   * @default none watched
   */
  limits?: ResourceLimits;
  /**
   * Run it on a warm trainer (`trainer.warmTrain`: backends/local/train-servers.ts) instead of `argv`: the local
   * backend only, which refuses nothing here (the spec's validation does). @default a process of its own
   */
  serve?: ServeRequest;
}

export interface TrainingBackend {
  readonly kind: string;
  launch(req: LaunchRequest): Promise<JobHandle>;
  status(handle: JobHandle): Promise<JobStatus>;
  /** Stops the job (and everything it started); resolves once it is gone. */
  cancel(handle: JobHandle): Promise<void>;
  /** The last lines the trainer wrote to stderr. */
  stderrTail(handle: JobHandle, lines?: number): Promise<string>;
  /**
   * Where the running job writes its run directory's files when that is not `handle.runDir` (a run a warm trainer
   * serves writes in its server's folder until it ends, then its outputs are copied into the run directory at the same
   * byte offsets). @default handle.runDir
   */
  liveRunDir?(handle: JobHandle): string;
  /**
   * Calls `changed` when the job may have ended, so a follower checks its status at once rather than at its next poll;
   * returns the function that stops watching, or undefined when no watch could be made. Optional, and never the only
   * way an end is seen: a follower polls every job, slowly while a watch stands (awaitTraining's pollDelayMs), at
   * its fast rate where there is none.
   */
  watchEnd?(handle: JobHandle, changed: () => void): (() => void) | undefined;
}
