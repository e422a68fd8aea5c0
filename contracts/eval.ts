// What the workflows and the eval activities exchange: scores per split, contamination, eval-failure critiques.

export interface ScoreCheckpointInput {
  checkpointId: string;
  suiteId: string;
  split: EvalSplit;
  /**
   * Why the split is read (`select`, `winner`, `baseline`, `gate`, `critique`): recorded with every held-out and test
   * read. The sealed `test` split is read for `report` only (what production really scores): a decision never reads it.
   */
  purpose: string;
}

/**
 * The error types with which scoring says the trainer's output broke its contract (its predictions, its checkpoint):
 * a verdict on the experiment ("scoring the public split: ..."), not a failure of the loop.
 */
export const CONTRACT_ERROR_TYPES: readonly string[] = [
  'PredictionsMismatchError',
  'ChecksumMismatchError',
  'ContractViolationError',
  'CheckpointFormatError',
];

/** How an experiment's error reads when scoring its public split found its output broken. */
export const publicScoringBroke = (message: string): string => `scoring the public split: ${message}`;

export interface ScoreResult {
  checkpointId: string;
  split: EvalSplit;
  itemCount: number;
  /**
   * `exact_match` (share of exact-token items right), `bits_per_byte` (when Flywheel can read the format),
   * `accuracy` (share of all output-graded items passed), `grader_errors`, `canary_hits` and
   * `heldout_canary_hits` (counts).
   */
  metrics: Record<string, number>;
}

export interface CheckContaminationInput {
  datasetVersionId: string;
  /** Who asks (the inner loop's id): recorded with the held-out read. */
  reader: string;
}

export interface ContaminationReport {
  datasetVersionId: string;
  examples: number;
  evalItems: number;
  canaries: number;
}

export interface CritiqueEvalFailuresInput {
  campaignId: string;
  /** The campaign version the iteration runs (its teacher). */
  campaignVersionId: string;
  outerIterationId: string;
  /** The production checkpoint, already scored on the public split. */
  checkpointId: string;
  suiteId: string;
  /** Most failed items critiqued (spec `outerLoop.evalFailureSample`). */
  sample: number;
  seed: number;
}

export interface CritiqueEvalFailuresResult {
  /** Failed public completion items, before sampling. */
  failed: number;
  critiqued: number;
  /** Critique rows this call wrote (a retry writes none). */
  created: number;
  /** Failed items per category among those critiqued. */
  byCategory: Record<string, number>;
  /** The `revision` signal's revisions of the iteration's feedback failures (only when the spec chooses it). */
  revisions?: { revised: number; verified: number };
}

export type EvalSplit = 'public' | 'heldout' | 'test' | 'probe';
