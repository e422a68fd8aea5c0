// Small named errors that say what went wrong, and whether retrying can help. Every Flywheel error class extends
// FlywheelError; an activity that throws a NonRetryableError fails at once (activities/retry-boundary.ts).

/**
 * The base of Flywheel's errors: its name is its class's name, it carries `cause` (ES2022), and the class says
 * whether running the same step again can succeed. Extend it directly for a failure that can pass (a busy endpoint, a
 * database restarting); extend NonRetryableError, or UsageError, for one that cannot.
 */
export class FlywheelError extends Error {
  /**
   * Whether a retry can succeed. Temporal retries a retryable failure of an activity per the activity's policy and
   * fails a non-retryable one on its first attempt.
   * @default true: like any error Temporal does not know
   */
  readonly retryable: boolean = true;

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A failure that the same input, on any worker, at any later time, meets again: retrying cannot help. */
export class NonRetryableError extends FlywheelError {
  override readonly retryable = false;
}

/** Bad input or settings the user can fix (the CLI exits with code 2); retrying cannot help. */
export class UsageError extends NonRetryableError {}

/** A row a workflow expected is missing: a wrong id, or a database reset under a running workflow. */
export class NotFoundError extends NonRetryableError {}

/** A checkpoint whose bytes do not match the sha256 in its manifest. */
export class ChecksumMismatchError extends NonRetryableError {}

/** A predictions file that does not answer exactly the prompts it was given. */
export class PredictionsMismatchError extends NonRetryableError {}

/** A trainer's output that breaks the job contract (no manifest, an unreadable checkpoint). */
export class ContractViolationError extends NonRetryableError {}

/** The campaign's spend reached `budget.maxCostUsd`: no more launches or agent calls. */
export class BudgetExceededError extends NonRetryableError {}

/** A dataset version that overlaps an eval split or carries a canary: no training run may use it. */
export class ContaminatedDatasetError extends NonRetryableError {}

/** A followed workflow ended without completing: failed, terminated, cancelled, timed out (exit code 1). */
export class LoopFailedError extends NonRetryableError {}
