// Inputs and results of the inner loop's orchestration activities: ids and small summaries only.
import type { Params } from '../core/spec';

export interface Proposal {
  experimentId: string;
  index: number;
  params: Params;
  hypothesis: string;
  proposer: string;
}

export interface StartInnerLoopInput {
  campaignId: string;
  /** The campaign version the loop runs. */
  campaignVersionId: string;
  innerLoopId: string;
  datasetVersionId: string;
  /** Warm start: every experiment (and the baseline) starts from this checkpoint. */
  baseCheckpointId?: string;
}

export interface ProposeInput {
  campaignId: string;
  /** The campaign version the loop runs. */
  campaignVersionId: string;
  innerLoopId: string;
  datasetVersionId: string;
  /** Index of the first experiment of this batch; ids are `${innerLoopId}/e${index}`. */
  startIndex: number;
  count: number;
}

export interface FinishExperimentInput {
  experimentId: string;
  status: 'succeeded' | 'pruned' | 'failed' | 'timed_out' | 'rejected' | 'cancelled';
  checkpointId?: string;
  error?: string;
}

export interface SelectBestInput {
  innerLoopId: string;
  metric: string;
  mode: 'min' | 'max';
}

export interface SelectedBest {
  experimentId: string;
  checkpointId: string;
  publicScore: number;
  params: Params;
}

export interface FinishInnerLoopInput {
  innerLoopId: string;
  status: 'completed' | 'stopped' | 'failed';
  bestExperimentId?: string;
  summary: Record<string, unknown>;
}

export interface AnalyzeBatchInput {
  campaignId: string;
  /** The campaign version the loop runs. */
  campaignVersionId: string;
  innerLoopId: string;
  startIndex: number;
  count: number;
}
