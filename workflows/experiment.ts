// experiment: one configuration, trained (relaunched per the spec's attempts when the trainer fails),
// then scored on the public split. The held-out split is never scored here: the inner loop asks for it
// only for its winner, so it cannot steer the search.
import { proxyActivities } from '@temporalio/workflow';
import type { TrainingOutcome } from '../activities/training/await-training';
import type { EvalActivities, OrchestrationActivities, TrainingActivities } from './activity-types';
import { awaitOptions, evalOptions, launchOptions, orchestrationOptions } from './activity-options';
import { queueOf } from './queues';

export interface ExperimentInput {
  experimentId: string;
  innerLoopId: string;
  suiteId: string;
  maxTrainingAttempts: number;
  trainingTimeoutSeconds: number;
  pruning: { rule: 'none' | 'median'; warmupSteps: number; minCompleted: number; metric: string };
  /** The baseline (untrained model) is never pruned and is scored on held-out only by the loop. */
  skipPublic?: boolean;
}

export interface ExperimentResult {
  experimentId: string;
  status: 'succeeded' | 'pruned' | 'failed' | 'timed_out';
  checkpointId?: string;
  attempts: number;
  publicMetrics?: Record<string, number>;
  error?: string;
}

export async function experiment(input: ExperimentInput): Promise<ExperimentResult> {
  const orch = proxyActivities<OrchestrationActivities>(orchestrationOptions(queueOf('orchestration')));
  const { launchTraining } = proxyActivities<TrainingActivities>(launchOptions(queueOf('training')));
  const { awaitTraining } = proxyActivities<TrainingActivities>(awaitOptions(queueOf('training'), input.trainingTimeoutSeconds));
  const { scoreCheckpoint } = proxyActivities<EvalActivities>(evalOptions(queueOf('eval')));

  let outcome: TrainingOutcome | undefined;
  let attempt = 0;
  while (attempt < input.maxTrainingAttempts) {
    attempt++;
    const { runId, handle } = await launchTraining({ experimentId: input.experimentId, attempt });
    outcome = await awaitTraining({
      runId,
      experimentId: input.experimentId,
      innerLoopId: input.innerLoopId,
      handle,
      pruning: input.pruning,
      timeoutSeconds: input.trainingTimeoutSeconds,
    });
    // A pruned or timed-out run is a verdict on the configuration, not a crash: relaunching cannot help.
    if (outcome.status !== 'failed') break;
  }
  if (!outcome || outcome.status !== 'succeeded') {
    const status = outcome?.status ?? 'failed';
    await orch.finishExperiment({ experimentId: input.experimentId, status, error: outcome?.error });
    return { experimentId: input.experimentId, status, attempts: attempt, error: outcome?.error };
  }
  const checkpointId = outcome.checkpointId!;
  let publicMetrics: Record<string, number> | undefined;
  if (!input.skipPublic) {
    const scored = await scoreCheckpoint({ checkpointId, suiteId: input.suiteId, split: 'public', purpose: 'select' });
    publicMetrics = scored.metrics;
  }
  await orch.finishExperiment({ experimentId: input.experimentId, status: 'succeeded', checkpointId });
  return { experimentId: input.experimentId, status: 'succeeded', checkpointId, attempts: attempt, publicMetrics };
}
