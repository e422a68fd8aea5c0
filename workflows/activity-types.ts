// The activity signatures the workflows call, by queue family. Type-only imports: workflow code never
// loads activity modules, it only proxies them.
import type { LoopSettings } from '../core/loop-settings';
import type { LaunchTrainingInput, LaunchTrainingResult } from '../activities/training/launch-training';
import type { AwaitTrainingInput, TrainingOutcome } from '../activities/training/await-training';
import type { AcquireCapacityInput, CapacityGrant } from '../activities/capacity/acquire-capacity';
import type { ReleaseCapacityInput } from '../activities/capacity/release-capacity';
import type { ScoreCheckpointInput, ScoreResult } from '../activities/eval/score-checkpoint';
import type { RegisterCampaignInput } from '../activities/campaign/register-campaign';
import type { PrepareTaskInput, PreparedTask } from '../activities/builtin-task/prepare-task';
import type { Proposal, ProposeInput, StartInnerLoopInput, FinishExperimentInput, FinishInnerLoopInput, SelectBestInput, SelectedBest } from '../activities/inner/types';

import type { ClaimIterationInput, ClaimIterationResult } from '../activities/outer/claim-iteration';
import type { CritiqueIterationInput, CritiqueIterationResult } from '../activities/outer/critique-iteration';
import type { BuildIterationDatasetInput, BuildIterationDatasetResult } from '../activities/outer/build-iteration-dataset';
import type { EvaluateGateInput, GateSummary } from '../activities/outer/evaluate-gate';
import type { PromotionEvidenceInput } from '../activities/outer/promotion-evidence';
import type { FinishIterationInput, FinishIterationResult } from '../activities/outer/finish-iteration';
import type { FailIterationInput } from '../activities/outer/fail-iteration';
import type { CritiqueEvalFailuresInput, CritiqueEvalFailuresResult } from '../activities/outer/critique-eval-failures';
import type { PromotionEvidence } from './outer-loop-api';
import type { CheckContaminationInput, ContaminationReport } from '../activities/eval/check-contamination';
import type { AnalyzeBatchInput } from '../activities/inner/analyze-batch';

export interface OrchestrationActivities {
  registerCampaign(input: RegisterCampaignInput): Promise<LoopSettings>;
  prepareTask(input: PrepareTaskInput): Promise<PreparedTask>;
  startInnerLoop(input: StartInnerLoopInput): Promise<Proposal>;
  proposeExperiments(input: ProposeInput): Promise<Proposal[]>;
  finishExperiment(input: FinishExperimentInput): Promise<void>;
  selectBest(input: SelectBestInput): Promise<SelectedBest | null>;
  finishInnerLoop(input: FinishInnerLoopInput): Promise<void>;
  claimOuterIteration(input: ClaimIterationInput): Promise<ClaimIterationResult>;
  critiqueIterationFeedback(input: CritiqueIterationInput): Promise<CritiqueIterationResult>;
  buildIterationDataset(input: BuildIterationDatasetInput): Promise<BuildIterationDatasetResult>;
  evaluateGate(input: EvaluateGateInput): Promise<GateSummary>;
  promotionEvidence(input: PromotionEvidenceInput): Promise<PromotionEvidence>;
  finishOuterIteration(input: FinishIterationInput): Promise<FinishIterationResult>;
  failOuterIteration(input: FailIterationInput): Promise<void>;
  analyzeBatch(input: AnalyzeBatchInput): Promise<{ analysisId: string; author: string }>;
}

export interface TrainingActivities {
  launchTraining(input: LaunchTrainingInput): Promise<LaunchTrainingResult>;
  awaitTraining(input: AwaitTrainingInput): Promise<TrainingOutcome>;
  acquireCapacity(input: AcquireCapacityInput): Promise<CapacityGrant>;
  releaseCapacity(input: ReleaseCapacityInput): Promise<{ released: boolean }>;
}

export interface EvalActivities {
  scoreCheckpoint(input: ScoreCheckpointInput): Promise<ScoreResult>;
  critiqueEvalFailures(input: CritiqueEvalFailuresInput): Promise<CritiqueEvalFailuresResult>;
  checkContamination(input: CheckContaminationInput): Promise<ContaminationReport>;
}
