// The outer loop's public surface: its input, its result, and the update and query researchers use from the
// CLI, a Temporal Schedule and the Temporal UI. One execution runs one iteration, then continues as new while
// `iterations` asks for more.
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export interface OuterLoopInput {
  campaignId: string;
  /**
   * The campaign version every iteration runs (`outer --spec`, `schedule create --spec`). Absent: each iteration runs
   * the campaign's latest version when it is claimed, and keeps it to its end (a retried or resumed claim too).
   */
  campaignVersionId?: string;
  /** Iterations to run back to back (continue-as-new between them). @default 1 */
  iterations?: number;
  /** Who started it, recorded with the iteration: `schedule`, `cli`, `ui`, `demo`. @default "ui" */
  trigger?: string;
  /** Overrides of the inner loop's budget for every iteration. */
  innerBudget?: { experiments?: number; parallelism?: number };
  /** Carried across continue-as-new; never set by a caller. */
  carry?: { done: OuterIterationSummary[] };
}

/**
 * What a caller may start `outerLoop` with: its input, or a spec to register first (the Temporal UI, `temporal
 * workflow start`), whose name is the campaign's when `campaignId` is absent. The loop carries the version id only.
 */
export type OuterLoopStart = Omit<OuterLoopInput, 'campaignId'> & { campaignId?: string; spec?: unknown };

/** What one iteration did, small enough for history: ids, counts and scores only. */
export interface OuterIterationSummary {
  /** `${campaignId}/outer/i${iteration}`, or `…/i${iteration}-a${attempt}` for a later attempt of the iteration */
  outerIterationId: string;
  iteration: number;
  status: 'promoted' | 'rejected' | 'skipped' | 'no-candidate';
  /** Why it was skipped, rejected or promoted (the gate's reason, or the claim's). */
  reason: string;
  newFeedback: number;
  critiques: number;
  datasetVersionId?: string;
  datasetExamples?: number;
  innerLoopId?: string;
  candidateCheckpointId?: string;
  /** The inner loop's winner and its public-split selection score. */
  innerBest?: { experimentId: string; publicScore: number };
  /** The production checkpoint after this iteration. */
  productionCheckpointId?: string;
  decisionId?: string;
  /** Held-out `metric` of the candidate and of the incumbent it was compared with, and the gate's metric. */
  heldout?: { metric: string; candidate?: number; incumbent?: number; production?: number };
  /**
   * On a promotion, the sealed test split's `metric` (the gate's) of the new production model and of the checkpoint
   * it replaced, over `items` test items; `error` when scoring failed. Reports only: no decision reads it.
   */
  test?: { metric: string; items?: number; production?: number; before?: number; error?: string };
}

/** A failed attempt's summary: its reason, and the attempt a retry of the iteration counts on from. */
export interface FailedIterationSummary extends Omit<OuterIterationSummary, 'status'> {
  status: 'failed';
  attempt: number;
}

/** What outer_iterations.summary holds once an attempt ends: the iteration's summary, or why it failed. */
export type StoredIterationSummary = OuterIterationSummary | FailedIterationSummary;

export interface OuterLoopResult {
  iterations: OuterIterationSummary[];
}

/** The evidence a researcher sees before approving a promotion (spec `outerLoop.promotion.requireApproval`). */
export interface PromotionEvidence {
  outerIterationId: string;
  candidateCheckpointId: string;
  incumbentCheckpointId: string;
  /** The gate's verdict and every check's reason. */
  gate: { promote: boolean; rule: string; reason: string; checks: { rule: string; passed: boolean; reason: string }[] };
  /** Held-out mean per category and metric, candidate minus incumbent (positive = better). */
  categoryDeltas: { metric: string; category: string; delta: number; items: number }[];
  /** Trainer seconds spent by the iteration's inner loop. */
  cost: { trainerSeconds: number; experiments: number };
  /** Knobs whose value differs from the production experiment's: `[knob, production, candidate]`. */
  configDiff: [string, unknown, unknown][];
  /** When the wait ends with the default decision (ISO time). */
  deadline: string;
  /** What happens at the deadline. */
  defaultDecision: 'promote' | 'reject';
}

export interface OuterLoopStatus {
  phase:
    | 'claiming'
    | 'ingesting'
    | 'critiquing'
    | 'building-dataset'
    | 'inner-loop'
    | 'measuring-noise'
    | 'gating'
    | 'awaiting-approval'
    | 'recording'
    | 'done';
  iteration?: number;
  innerLoopId?: string;
  awaitingApproval?: PromotionEvidence;
  done: OuterIterationSummary[];
}

/** A researcher's decision on a pending promotion; refused (with the reason) when none is pending. */
export const approvePromotionUpdate = defineUpdate<string, [{ approve: boolean; by?: string; note?: string }]>('approvePromotion');
export const outerStatusQuery = defineQuery<OuterLoopStatus>('outerStatus');

/** Summaries kept in the carried state: older ones are in PostgreSQL (`outer_iterations`). */
export const OUTER_SUMMARY_CAP = 20;

/** An attempt after the first (a failed or terminated one started again) gets ids of its own: `…/i2-a2`. */
export const outerIterationIdOf = (campaignId: string, iteration: number, attempt = 1): string =>
  `${campaignId}/outer/i${iteration}${attempt > 1 ? `-a${attempt}` : ''}`;
export const outerInnerLoopIdOf = (outerIterationId: string): string => `${outerIterationId}/inner`;
