// Small named errors that say what went wrong. Their names are listed in the activities'
// `nonRetryableErrorTypes` where retrying cannot help (see NON_RETRYABLE).

/** A row a workflow expected is missing: a wrong id, or a database reset under a running workflow. */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** A checkpoint whose bytes do not match the sha256 in its manifest. */
export class ChecksumMismatchError extends Error {
  override readonly name = 'ChecksumMismatchError';
}

/** A predictions file that does not answer exactly the prompts it was given. */
export class PredictionsMismatchError extends Error {
  override readonly name = 'PredictionsMismatchError';
}

/** A trainer's output that breaks the job contract (no manifest, an unreadable checkpoint). */
export class ContractViolationError extends Error {
  override readonly name = 'ContractViolationError';
}

/** The campaign's spend reached `budget.maxCostUsd`: no more launches or agent calls. */
export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError';
}

/** A dataset version that overlaps an eval split or carries a canary: no training run may use it. */
export class ContaminatedDatasetError extends Error {
  override readonly name = 'ContaminatedDatasetError';
}

export const NON_RETRYABLE = [
  'BudgetExceededError',
  'InvalidSpecError',
  'NotFoundError',
  'ChecksumMismatchError',
  'PredictionsMismatchError',
  'ContractViolationError',
  'InvalidWeightsError',
  'InvalidFeedbackError',
  'FeedbackConflictError',
  'ConflictingCopiesError',
  'UnknownCampaignError',
  'DecisionConflictError',
  'ContaminatedDatasetError',
  'MalformedSuiteError',
  // agents/agent-errors.ts: a refused request (bad key, unknown model) and an unusable reply (which the teacher
  // step turns into a built-in critique, so it only escapes from agents without a fallback).
  'AgentRequestError',
  'UnusableReplyError',
  'TokenBudgetExceededError',
  // backends/sandbox: no sandbox on this host for a trainer that needs one, and a trainer program that does not exist.
  'SandboxUnavailableError',
  'TrainerProgramNotFoundError',
];

/** Bad input the user can fix (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A followed workflow ended without completing: failed, terminated, cancelled, timed out (exit code 1). */
export class LoopFailedError extends Error {
  override readonly name = 'LoopFailedError';
}
