// The activity signatures the workflows call, by queue family. Type-only imports: workflow code never
// loads activity modules, it only proxies them.
import type { LoopSettings } from '../core/loop-settings';
import type { LaunchTrainingInput, LaunchTrainingResult } from './training';
import type { AwaitTrainingInput, TrainingOutcome } from './training';
import type { AcquireCapacityInput, CapacityGrant } from './training';
import type { ReleaseCapacityInput, RunTrainingInput } from './training';
import type { CheckTrainerInput, TrainerCheck } from './training';
import type { ScoreCheckpointInput, ScoreResult } from './eval';
import type { CampaignRef } from './loop-input';
import type { LoopSettingsInput } from './campaign';
import type { PrepareTaskInput, PreparedTask } from './campaign';
import type {
  Proposal,
  ProposeInput,
  StartInnerLoopInput,
  FinishExperimentInput,
  FinishInnerLoopInput,
  SelectBestInput,
  SelectedBest,
} from './inner-activities';

import type { ClaimIterationInput, ClaimIterationResult } from './outer-activities';
import type { CritiqueIterationInput, CritiqueIterationResult } from './outer-activities';
import type { BuildIterationDatasetInput, BuildIterationDatasetResult } from './outer-activities';
import type { EvaluateGateInput, GateSummary, PlanSeedRerunsInput, SeedRerunPlan } from './outer-activities';
import type { PromotionEvidenceInput } from './outer-activities';
import type { FinishIterationInput, FinishIterationResult } from './outer-activities';
import type { FailIterationInput } from './outer-activities';
import type { CritiqueEvalFailuresInput, CritiqueEvalFailuresResult } from './eval';
import type { PromotionEvidence } from './outer-loop';
import type { CheckContaminationInput, ContaminationReport } from './eval';
import type { AnalyzeBatchInput } from './inner-activities';

export interface OrchestrationActivities {
  /** A loop input's campaign name or spec as a version id (a spec is registered first). */
  resolveCampaignVersion(input: CampaignRef): Promise<{ campaignVersionId: string }>;
  /** The loop settings of a campaign version (its budget, selection, pruning, …). */
  loopSettings(input: LoopSettingsInput): Promise<LoopSettings>;
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
  planSeedReruns(input: PlanSeedRerunsInput): Promise<SeedRerunPlan>;
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
  /** acquireCapacity, launchTraining, awaitTraining and, after an outcome, the release, in one activity. */
  runTraining(input: RunTrainingInput): Promise<TrainingOutcome>;
  checkTrainer(input: CheckTrainerInput): Promise<TrainerCheck>;
}

export interface EvalActivities {
  scoreCheckpoint(input: ScoreCheckpointInput): Promise<ScoreResult>;
  critiqueEvalFailures(input: CritiqueEvalFailuresInput): Promise<CritiqueEvalFailuresResult>;
  checkContamination(input: CheckContaminationInput): Promise<ContaminationReport>;
}
