// The slice of a campaign spec the workflows need: small, so it can travel in workflow history.
import type { GateSettings } from './gate/settings';
import type { CampaignSpec } from './spec';

export interface LoopSettings {
  campaignId: string;
  experiments: number;
  parallelism: number;
  batchSize: number;
  patience: number;
  minDelta: number;
  requireApproval: boolean;
  maxTrainingAttempts: number;
  trainingTimeoutSeconds: number;
  selection: { metric: string; mode: 'min' | 'max' };
  pruning: { rule: string; warmupSteps: number; minCompleted: number; metric: string; options?: Record<string, unknown> };
  /** `inline`: experiments run as coroutines of the loop's workflow (workflows/inner-loop-start.ts runChild). Absent: children. */
  experimentWorkflows?: 'inline';
  /**
   * `true` for a warm-trained campaign (trainer.warmTrain, the local backend): an experiment's public split is scored
   * by the runTraining activity that trained it (workflows/experiment.ts SCORED_WITH_TRAINING). Absent: by its own
   * scoreCheckpoint on the eval queue.
   */
  scoreWithTraining?: true;
}

export function loopSettings(spec: CampaignSpec): LoopSettings {
  const il = spec.innerLoop;
  return {
    campaignId: spec.name,
    experiments: il.budget.experiments,
    parallelism: il.budget.parallelism,
    batchSize: il.batchSize,
    patience: il.plateau.patience,
    minDelta: il.plateau.minDelta,
    requireApproval: il.requireApproval,
    maxTrainingAttempts: il.maxTrainingAttempts,
    trainingTimeoutSeconds: il.trainingTimeoutSeconds,
    selection: { metric: spec.selection.metric, mode: spec.selection.mode },
    pruning: { ...il.pruning },
    // Only when asked: settings recorded in histories before it have no such field, and stay equal to today's.
    ...(il.experimentWorkflows === 'inline' ? { experimentWorkflows: 'inline' as const } : {}),
    ...(spec.trainer.warmTrain ? { scoreWithTraining: true as const } : {}),
  };
}

/** True when `a` is better than `b` under the selection rule by more than `minDelta`. */
export function improves(a: number, b: number | undefined, mode: 'min' | 'max', minDelta = 0): boolean {
  if (b === undefined) return true;
  return mode === 'min' ? a < b - minDelta : a > b + minDelta;
}

/** The slice of a spec the outer loop carries: samples, warm start, the inner budget, the gate and approval. */
export interface OuterSettings {
  feedbackSample: number;
  evalFailureSample: number;
  warmStart: boolean;
  innerBudget: { experiments?: number; parallelism?: number };
  gate: GateSettings;
  approval: { requireApproval: boolean; timeoutSeconds: number; onTimeout: 'promote' | 'reject' };
}

export function outerSettings(spec: CampaignSpec): OuterSettings {
  const o = spec.outerLoop;
  const { requireApproval, timeoutSeconds, onTimeout, ...gate } = o.promotion;
  return {
    feedbackSample: o.feedbackSample,
    evalFailureSample: o.evalFailureSample,
    warmStart: o.warmStart.enabled,
    innerBudget: { ...o.innerBudget },
    gate,
    approval: { requireApproval, timeoutSeconds, onTimeout },
  };
}
