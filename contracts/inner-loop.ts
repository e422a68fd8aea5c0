// The inner loop's public surface: its input, its result, and the signals, updates and queries
// researchers use from the CLI and the Temporal UI.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { LoopSettings } from '../core/loop-settings';
import type { CampaignRef } from './loop-input';
import type { PreparedTask } from './campaign';
import type { Params } from '../core/spec';

export interface InnerLoopInput {
  /**
   * The campaign version the loop runs (`<name>@<hash>`, registered before the start): its trainer, search space and
   * budget stay as they were when the spec is edited and registered again mid-run.
   */
  campaignVersionId: string;
  /** Train on this dataset version instead of the task's base one (the outer loop passes its new version). */
  datasetVersionId?: string;
  /**
   * Start every experiment from this checkpoint (the outer loop's warm start from production); the knobs of
   * `outerLoop.warmStart.pinnedKnobs` take its experiment's values. @default none: from scratch
   */
  baseCheckpointId?: string;
  /** Overrides of the spec's budget for this loop. */
  budget?: { experiments?: number; parallelism?: number };
  /** Outer-loop iteration, for the Iteration search attribute. @default 0 */
  iteration?: number;
  /** Continue as new past this many history events (the server may suggest it sooner). @default 8000 */
  historyEventsLimit?: number;
  /** Carried across continue-as-new; never set by a caller. */
  carry?: InnerLoopState;
}

/**
 * What a caller may start `innerLoop` with: its input, or instead of the version id a campaign's name (its newest
 * version) or a spec to register first (the Temporal UI, `temporal workflow start`). The loop carries the id only.
 */
export type InnerLoopStart = Omit<InnerLoopInput, 'campaignVersionId'> & CampaignRef;

export interface LeaderEntry {
  experimentId: string;
  index: number;
  params: Params;
  proposer: string;
  hypothesis: string;
  status: 'proposed' | 'awaiting-approval' | 'running' | 'succeeded' | 'pruned' | 'failed' | 'timed_out' | 'rejected';
  /** The selection metric on the public split. */
  score?: number;
}

export interface InnerLoopState {
  settings: LoopSettings;
  task: PreparedTask;
  baseline: { experimentId: string; checkpointId?: string };
  launched: number;
  batches: number;
  batchesWithoutImprovement: number;
  best?: { experimentId: string; score: number };
  /** Finished experiments only, best first, capped: the full table is in PostgreSQL. */
  leaderboard: LeaderEntry[];
  paused: boolean;
  /**
   * Researcher patches (`flywheel propose`) queued by the proposePatch update, by their recipe_patches id: the next
   * batch makes room for them all (within the budget), and the loop does not end on a plateau while one waits.
   * Absent until the first one.
   */
  queuedPatches?: string[];
}

export interface InnerLoopStatus {
  phase: 'preparing' | 'running' | 'paused' | 'stopping' | 'scoring-winner' | 'done';
  launched: number;
  budget: number;
  parallelism: number;
  running: string[];
  awaitingApproval: string[];
  best?: { experimentId: string; score: number };
  batchesWithoutImprovement: number;
  /** Researcher patches queued for the next batch (recipe_patches ids); absent from loops on older workers. */
  queuedPatches?: string[];
}

export interface InnerLoopResult {
  innerLoopId: string;
  experiments: number;
  /** `budget`: the experiment budget is used up, or the cost cap refused a launch (then `budgetExceeded` is set). */
  stoppedBy: 'budget' | 'plateau' | 'stop';
  /** The cost cap's message, when `budget.maxCostUsd` stopped the loop. */
  budgetExceeded?: string;
  best?: { experimentId: string; checkpointId: string; params: Params; publicScore: number };
  heldout: { best?: Record<string, number>; baseline?: Record<string, number> };
  /** The baseline's checkpoint: the untrained model, or a copy of the warm start's base. */
  baselineCheckpointId?: string;
}

export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const stopSignal = defineSignal('stop');
export const setBudgetUpdate = defineUpdate<{ experiments: number; parallelism: number }, [{ experiments?: number; parallelism?: number }]>(
  'setBudget',
);
export const approveProposalUpdate = defineUpdate<string, [{ experimentId: string; approve: boolean }]>('approveProposal');
/**
 * A researcher's patch, already checked and stored by `flywheel propose` as a queued recipe_patches
 * row: the update carries its id only, never the diff, so the history holds no model- or researcher-written code.
 */
export const proposePatchUpdate = defineUpdate<string, [{ patchId: string }]>('proposePatch');
export const statusQuery = defineQuery<InnerLoopStatus>('status');
export const leaderboardQuery = defineQuery<LeaderEntry[]>('leaderboard');

/** Leaderboard entries kept in workflow state (and so in history on continue-as-new). */
export const LEADERBOARD_CAP = 50;
