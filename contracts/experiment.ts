// The experiment child workflow's input and result: what the inner loop starts it with and reads back.

/** The proposer of a search's baseline experiment: zero steps, the reference every held-out score is compared with. */
export const BASELINE_PROPOSER = 'baseline';

export interface ExperimentInput {
  experimentId: string;
  innerLoopId: string;
  suiteId: string;
  maxTrainingAttempts: number;
  trainingTimeoutSeconds: number;
  pruning: { rule: string; warmupSteps: number; minCompleted: number; metric: string; options?: Record<string, unknown> };
  /** The baseline (untrained model) is never pruned and is scored on held-out only by the loop. */
  skipPublic?: boolean;
  /** A warm-trained campaign's (LoopSettings.scoreWithTraining): the training attempt's runTraining scores the public split. */
  scoreWithTraining?: boolean;
}

export interface ExperimentResult {
  experimentId: string;
  status: 'succeeded' | 'pruned' | 'failed' | 'timed_out';
  checkpointId?: string;
  attempts: number;
  publicMetrics?: Record<string, number>;
  error?: string;
  /** The campaign's cost cap refused the launch (`error` says how much was spent): the loop proposes no more. */
  budgetExceeded?: boolean;
}
