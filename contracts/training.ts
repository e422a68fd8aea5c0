// What the experiment workflow and the training activities exchange: launch, await, capacity.
import type { JobHandle } from './job-handle';

export interface LaunchTrainingInput {
  experimentId: string;
  /** The experiment's training attempt (1, 2, ...), counted by the workflow, not by activity retries. */
  attempt: number;
}

export interface LaunchTrainingResult {
  runId: string;
  handle: JobHandle;
}

export interface AwaitTrainingInput {
  runId: string;
  experimentId: string;
  innerLoopId: string;
  handle: JobHandle;
  pruning: { rule: string; warmupSteps: number; minCompleted: number; metric: string; options?: Record<string, unknown> };
  timeoutSeconds: number;
}

/** One training attempt, from its capacity slot to its end (runTraining: acquire, launch, await and release in one). */
export interface RunTrainingInput {
  experimentId: string;
  /** The experiment's training attempt (1, 2, ...), counted by the workflow, not by activity retries. */
  attempt: number;
  innerLoopId: string;
  pruning: AwaitTrainingInput['pruning'];
  timeoutSeconds: number;
  /**
   * Since SCORED_WITH_TRAINING (workflows/experiment.ts), for a warm-trained campaign: the suite whose public split
   * scores the run's checkpoint when it succeeds, in this activity (the outcome carries the metrics) instead of a
   * scoreCheckpoint activity of its own.
   */
  scorePublic?: { suiteId: string };
}

/** A small summary for the workflow history; the metrics themselves are in PostgreSQL. */
export interface TrainingOutcome {
  runId: string;
  status: TrainingStatus;
  checkpointId?: string;
  exitCode?: number;
  lastStep?: number;
  error?: string;
  /** The checkpoint's public metrics, when runTraining scored it (RunTrainingInput.scorePublic). */
  publicMetrics?: Record<string, number>;
  /** Why scoring the public split found the trainer's output broken (a contract error), when runTraining scored it. */
  scoringBroke?: string;
  /**
   * The experiment's success (status, best checkpoint, end time) was recorded with its public score, in one statement,
   * by the runTraining that scored it: its workflow records no end of its own (ENDED_WITH_SCORE).
   */
  experimentEnded?: boolean;
}

export interface AcquireCapacityInput {
  experimentId: string;
  /** The workflow's training attempt: the slot is keyed by the run id `${experimentId}/r${attempt}`. */
  attempt: number;
}

export interface CapacityGrant {
  runId: string;
  /** Seconds from the acquire being scheduled to the grant (a retried acquire counts from the first try). */
  waitedSeconds: number;
}

export interface ReleaseCapacityInput {
  experimentId: string;
  attempt: number;
}

export type TrainingStatus = 'succeeded' | 'failed' | 'pruned' | 'timed_out';

/**
 * Flywheel's own decision to stop a running job (training_runs.verdict), stored before the kill, so an awaitTraining
 * that reattaches after a lost completion reports it instead of "cancelled outside Flywheel".
 */
export interface RunVerdict {
  status: 'pruned' | 'timed_out' | 'cancelled';
  /** The step the decision was taken at, when there was one. */
  lastStep?: number;
  /** Why, in one line: what the run's outcome reports as its error. */
  error: string;
}

export interface CheckTrainerInput {
  /** The campaign version the inner loop runs. */
  campaignVersionId: string;
}

/**
 * What the training worker found before the loop's first write: the trainer can start there (and how it is
 * isolated; `cluster`: Ray or Kubernetes run it in their container, unchecked), or the one-line reason it cannot.
 */
export type TrainerCheck =
  { ok: true; host: string; sandbox: 'bubblewrap' | 'none' | 'cluster' } | { ok: false; host: string; reason: string };
