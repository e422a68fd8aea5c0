// What the outer loop and its activities exchange: claims, critiques, dataset versions, the gate, the iteration's end.
import type { GateSettingsInput } from '../core/gate/settings';
import type { NoiseSummary } from '../core/gate/noise-check';
import type { OuterSettings } from '../core/loop-settings';
import type { OuterIterationSummary } from './outer-loop';

export interface ClaimIterationInput {
  campaignId: string;
  /** The outer loop's pinned version; absent: the campaign's latest when a new attempt is claimed. */
  campaignVersionId?: string;
  /** The outerLoop workflow id (stable across continue-as-new). */
  workflowId: string;
  /** The run claiming it: a later run under the same workflow id is another owner. Absent in old histories. */
  runId?: string;
  trigger: string;
}

export type ClaimIterationResult =
  | {
      claimed: true;
      outerIterationId: string;
      iteration: number;
      /** 1, or more for an iteration started again after a failed or terminated attempt. */
      attempt: number;
      /** The production checkpoint when the iteration began, or null before the first promotion. */
      incumbentCheckpointId: string | null;
      newFeedback: number;
      /** The attempt this one replaces, and why that one ended (absent for a first attempt or a resume). */
      replaces?: { outerIterationId: string; reason: string };
      /** The campaign version the attempt runs (recorded with it, so a resumed claim keeps it). */
      campaignVersionId: string;
      settings: OuterSettings;
    }
  | { claimed: false; reason: string };

export interface CritiqueIterationInput {
  campaignId: string;
  /** The campaign version the iteration runs. */
  campaignVersionId: string;
  outerIterationId: string;
  /** Most failures critiqued (spec `outerLoop.feedbackSample`). */
  sample: number;
  /** Seeds the sample's order, so a retry draws the same events. */
  seed: number;
}

export interface CritiqueIterationResult {
  /** Failures among the ingested events, before sampling. */
  failures: number;
  sampled: number;
  counts: CritiqueFeedbackResult['counts'];
}

export interface BuildIterationDatasetInput {
  campaignId: string;
  /** The campaign version the iteration runs. */
  campaignVersionId: string;
  outerIterationId: string;
  iteration: number;
  /** The task's base version (prepareTask), the parent of the first iteration's version. */
  baseVersionId: string;
  /** The production checkpoint whose public results set the loss weights; none before the first promotion. */
  incumbentCheckpointId: string | null;
  suiteId: string;
}

export interface BuildIterationDatasetResult {
  versionId: string;
  parentVersionId: string;
  created: boolean;
  counts: BuildDatasetVersionResult['counts'];
  lossWeights: Record<string, number>;
}

export interface EvaluateGateInput {
  /** Deterministic, e.g. `${outerLoopWorkflowId}/gate`: the decision row's id. */
  decisionId: string;
  campaignId: string;
  candidateCheckpointId: string;
  /** The production checkpoint, or the untrained baseline's checkpoint before the first promotion. */
  incumbentCheckpointId: string;
  suiteId: string;
  /** The spec's `promotion:` block; missing fields take their defaults. */
  settings?: GateSettingsInput;
  /**
   * Checkpoints of the seed reruns of the incumbent's recipe (planSeedReruns), scored on held-out: their spread is
   * σ_seed. Absent or empty: the spread across items only.
   */
  seedRerunCheckpointIds?: string[];
}

export interface PlanSeedRerunsInput {
  campaignId: string;
  campaignVersionId: string;
  /** The iteration's dataset version: the reruns train on it (and are cached per it). */
  datasetVersionId: string;
  /** Whose recipe is rerun (the candidate's when the incumbent is the untrained baseline). */
  incumbentCheckpointId: string;
  candidateCheckpointId: string;
  /** The candidate's warm start, which the reruns share; absent: from scratch. */
  baseCheckpointId?: string;
  /** k (promotion.noise.seeds). */
  seeds: number;
}

/** Small: ids only. */
export interface SeedRerunPlan {
  /** The reruns' group (an inner_loops row of status `seed-reruns`): `${campaignId}/noise/<digest>`. */
  groupId: string;
  /** Whose recipe, in words. */
  recipeOf: string;
  /**
   * Whose trainer the reruns ran, as the decision records it (`independent: …` or `blind: …`,
   * core/gate/reference-control.ts); absent in plans made before the reruns chose their trainer.
   */
  reference?: string;
  /** Experiment ids not run yet: each runs as an `experiment` child whose workflow id is its id. */
  toRun: string[];
  /** Checkpoints of reruns that already succeeded (an earlier gate on the same version and recipe). */
  done: string[];
  maxTrainingAttempts: number;
  trainingTimeoutSeconds: number;
}

/** The gate's noise as recorded with its decision (core/gate/noise-check.ts noiseSummaryOf). */
export type GateNoiseSummary = NoiseSummary;

/** Small enough for workflow history: no items, no per-item scores. */
export interface GateSummary {
  promote: boolean;
  /**
   * Not promoted, but held for a researcher's approval rather than rejected: every failing check is one the settings
   * hold (`heldoutOutrun: hold`). The decision row's kind is then `hold`.
   */
  hold: boolean;
  rule: string;
  reason: string;
  /** The primary metric's mean improvement (positive = better); 0 when it has no scores. */
  meanDelta: number;
  /** The paired test's one-sided p-value; 1 when the primary metric has no scores. */
  pValue: number;
  /** σ (across seeds and across items), the multiple and Δ; absent in decisions recorded before the noise check. */
  noise?: GateNoiseSummary;
}

export interface PromotionEvidenceInput {
  outerIterationId: string;
  decisionId: string;
  innerLoopId: string;
  candidateCheckpointId: string;
  incumbentCheckpointId: string;
  suiteId: string;
  deadline: string;
  defaultDecision: 'promote' | 'reject';
}

export interface FinishIterationInput {
  campaignId: string;
  outerIterationId: string;
  summary: OuterIterationSummary;
  /** Set when the iteration promotes: the compare-and-set's expected current value. */
  promote?: { candidateCheckpointId: string; incumbentCheckpointId: string | null };
  /** A researcher's answer (or the timeout's default) to an approval request. */
  approval?: { approve: boolean; by: string; note?: string; timedOut: boolean; candidateCheckpointId: string; experimentId?: string };
}

export interface FinishIterationResult {
  productionCheckpointId: string | null;
}

export interface FailIterationInput {
  outerIterationId: string;
  /** Why, in one line: the failure's message and its causes. */
  reason: string;
  /** The attempt's inner loop, when it got that far. */
  innerLoopId?: string;
}

export interface BuildDatasetVersionResult {
  versionId: string;
  /** False when a version built from the same inputs already existed: nothing was written. */
  created: boolean;
  counts: {
    /** Examples in the version. */
    examples: number;
    bySource: Record<string, number>;
    /** Examples from critiques that are in the version (not already present, not removed). */
    added: number;
    /** Critique examples whose content the version already held. */
    duplicates: number;
    /**
     * What was dropped for overlapping an eval item: examples and pairs as built (parent's and new alike), and the
     * feedback events counted in `droppedEvents`.
     */
    removed: number;
    /**
     * Feedback events (one per critique) whose raw fields (prompt, output, correction, revision, critique text, before
     * any wrapping or escaping) overlap an eval item: no example or pair of any builder was made from them.
     */
    droppedEvents: number;
    /** The teacher's stored signals that are not SFT targets: `pair` (the `pairs` builder reads the event instead) and `none`. */
    skippedSignals: { pair: number; none: number };
    /** Bytes of train.txt, repetitions included. */
    trainBytes: number;
    /** Preference pairs in the version (its pairs.jsonl); absent when it has none. */
    pairs?: number;
  };
  /**
   * The first {@link MAX_REMOVED_LISTED} removed examples and pairs and dropped events (their critique's id as
   * `sourceRef`, listed first), with the eval items each overlaps.
   */
  removed: { sourceRef: string; evalItemIds: string[] }[];
}

export interface CritiqueFeedbackResult {
  /** One per critiqued event, `${campaignId}/critique/${eventId}`, in the order of `eventIds`. */
  critiqueIds: string[];
  counts: {
    /** Critique rows this call wrote (a retry writes none). */
    created: number;
    /** Critiques whose signals include a training example (`sft`). */
    withExample: number;
    /** Critiques of failures with nothing to learn from (`{ kind: 'none' }`). */
    noSignal: number;
    /** Events that are not failures: accepts and ratings of 3 stars or more. */
    skipped: number;
    missing: number;
  };
}
