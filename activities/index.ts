// The activities of each task-queue family, built from their dependencies (STYLE: dependency injection).
import type { QueueFamily } from '../contracts/queues';
import type { EvalActivities, OrchestrationActivities, TrainingActivities } from '../contracts/activities';
import { prepareTask } from './task/prepare-task';
import { loopSettings } from './task/loop-settings';
import { resolveCampaignVersion } from './task/resolve-campaign-version';
import { withDefaults, type ActivityDeps } from './deps';
import { scoreCheckpoint } from './eval/score-checkpoint';
import { finishExperiment, finishInnerLoop, selectBest, startInnerLoop } from './inner/loop-records';
import { proposeExperiments } from './inner/propose-experiments';
import { analyzeBatch } from './inner/analyze-batch';
import { acquireCapacity } from './capacity/acquire-capacity';
import { releaseCapacity } from './capacity/release-capacity';
import { awaitTraining } from './training/await-training';
import { launchTraining } from './training/launch-training';
import { runTraining } from './training/run-training';
import { checkTrainer } from './training/check-trainer';
import { buildIterationDataset } from './outer/build-iteration-dataset';
import { claimOuterIteration } from './outer/claim-iteration';
import { critiqueEvalFailures } from './outer/critique-eval-failures';
import { critiqueIterationFeedback } from './outer/critique-iteration';
import { evaluateGate } from './outer/evaluate-gate';
import { planSeedReruns } from './outer/plan-seed-reruns';
import { finishOuterIteration } from './outer/finish-iteration';
import { failOuterIteration } from './outer/fail-iteration';
import { promotionEvidence } from './outer/promotion-evidence';
import { checkContamination } from './eval/check-contamination';
import { autoHeartbeatAll } from './auto-heartbeat';
import { retryBoundaryAll } from './retry-boundary';

export type { ActivityDeps } from './deps';

export interface FamilyActivities {
  orchestration: OrchestrationActivities;
  training: TrainingActivities;
  eval: EvalActivities;
}

/**
 * Every activity heartbeats while it runs (autoHeartbeatAll), except awaitTraining, acquireCapacity and runTraining, which
 * heartbeat their own progress details. Every activity fails without a retry on an error whose class says retrying
 * cannot help (retryBoundaryAll).
 */
export function createActivities(given: ActivityDeps): FamilyActivities & Record<QueueFamily, object> {
  // One resolver for every activity of the worker (withDefaults): each campaign version is read and validated once.
  const deps = withDefaults(given);
  return {
    orchestration: retryBoundaryAll(
      autoHeartbeatAll<OrchestrationActivities>({
        resolveCampaignVersion: (i) => resolveCampaignVersion(deps, i),
        loopSettings: (i) => loopSettings(deps, i),
        prepareTask: (i) => prepareTask(deps, i),
        startInnerLoop: (i) => startInnerLoop(deps, i),
        proposeExperiments: (i) => proposeExperiments(deps, i),
        finishExperiment: (i) => finishExperiment(deps, i),
        selectBest: (i) => selectBest(deps, i),
        finishInnerLoop: (i) => finishInnerLoop(deps, i),
        claimOuterIteration: (i) => claimOuterIteration(deps, i),
        critiqueIterationFeedback: (i) => critiqueIterationFeedback(deps, i),
        buildIterationDataset: (i) => buildIterationDataset(deps, i),
        evaluateGate: (i) => evaluateGate(deps.db, i),
        planSeedReruns: (i) => planSeedReruns(deps, i),
        promotionEvidence: (i) => promotionEvidence(deps, i),
        finishOuterIteration: (i) => finishOuterIteration(deps, i),
        failOuterIteration: (i) => failOuterIteration(deps, i),
        analyzeBatch: (i) => analyzeBatch(deps, i),
      }),
    ),
    training: retryBoundaryAll({
      ...autoHeartbeatAll<Pick<TrainingActivities, 'launchTraining' | 'releaseCapacity' | 'checkTrainer'>>({
        launchTraining: (i) => launchTraining(deps, i),
        releaseCapacity: (i) => releaseCapacity(deps, i),
        checkTrainer: (i) => checkTrainer(deps, i),
      }),
      awaitTraining: (i) => awaitTraining(deps, i),
      acquireCapacity: (i) => acquireCapacity(deps, i),
      runTraining: (i) => runTraining(deps, i),
    }),
    eval: retryBoundaryAll(
      autoHeartbeatAll<EvalActivities>({
        scoreCheckpoint: (i) => scoreCheckpoint(deps, i),
        critiqueEvalFailures: (i) => critiqueEvalFailures(deps, i),
        checkContamination: (i) => checkContamination(deps, i),
      }),
    ),
  };
}
