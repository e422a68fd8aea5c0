// experiment: one configuration, trained (relaunched per the spec's attempts when the trainer fails),
// then scored on the public split. The held-out split is never scored here: the inner loop asks for it
// only for its winner, so it cannot steer the search. Each training attempt holds a capacity slot from before its
// launch until its end (acquireCapacity waits inside one activity), and a launch the cost cap refuses ends the
// experiment as failed with `budgetExceeded`, which stops the inner loop. Since FEWER_ROUND_TRIPS, one runTraining
// activity does an attempt's acquire, launch, await and release (the release again here only when it ends without an
// outcome), and finishExperiment is a local activity: 3 workflow tasks per experiment instead of 7.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  patched,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { TrainingOutcome } from '../contracts/training';
import type { EvalActivities, OrchestrationActivities, TrainingActivities } from '../contracts/activities';
import {
  awaitOptions,
  bookkeepingOptions,
  capacityOptions,
  evalOptions,
  launchOptions,
  orchestrationOptions,
  trainingOptions,
} from './activity-options';
import { queueOf } from './queues';
import type { ExperimentInput, ExperimentResult } from '../contracts/experiment';

/** The patch id of the one-activity training attempt and the local finishExperiment (see the header). */
export const FEWER_ROUND_TRIPS = 'experiment-fewer-round-trips';

export async function experiment(input: ExperimentInput): Promise<ExperimentResult> {
  const fewer = patched(FEWER_ROUND_TRIPS);
  const orch = fewer
    ? proxyLocalActivities<OrchestrationActivities>(bookkeepingOptions())
    : proxyActivities<OrchestrationActivities>(orchestrationOptions(queueOf('orchestration')));
  const { launchTraining, releaseCapacity } = proxyActivities<TrainingActivities>(launchOptions(queueOf('training')));
  const { awaitTraining } = proxyActivities<TrainingActivities>(awaitOptions(queueOf('training'), input.trainingTimeoutSeconds));
  const { acquireCapacity } = proxyActivities<TrainingActivities>(capacityOptions(queueOf('training')));
  const { runTraining } = proxyActivities<TrainingActivities>(trainingOptions(queueOf('training'), input.trainingTimeoutSeconds));
  const { scoreCheckpoint } = proxyActivities<EvalActivities>(evalOptions(queueOf('eval')));

  const runAttempt = (attempt: number): Promise<TrainingOutcome> =>
    runTraining({
      experimentId: input.experimentId,
      attempt,
      innerLoopId: input.innerLoopId,
      pruning: input.pruning,
      timeoutSeconds: input.trainingTimeoutSeconds,
    });
  const train = async (attempt: number): Promise<TrainingOutcome> => {
    const { runId, handle } = await launchTraining({ experimentId: input.experimentId, attempt });
    return awaitTraining({
      runId,
      experimentId: input.experimentId,
      innerLoopId: input.innerLoopId,
      handle,
      pruning: input.pruning,
      timeoutSeconds: input.trainingTimeoutSeconds,
    });
  };
  let outcome: TrainingOutcome | undefined;
  let budgetStop: string | undefined;
  let attempt = 0;
  while (attempt < input.maxTrainingAttempts) {
    attempt++;
    const key = { experimentId: input.experimentId, attempt };
    // runTraining releases the slot itself once it has an outcome; without one, the release is still ours.
    let released = false;
    try {
      if (fewer) {
        outcome = await runAttempt(attempt);
        released = true;
      } else {
        await acquireCapacity(key);
        outcome = await train(attempt);
      }
    } catch (e) {
      budgetStop = budgetExceeded(e);
      if (budgetStop === undefined) throw e;
      break;
    } finally {
      // On failure and on cancellation too: a cancelled scope could not schedule it, so it runs outside.
      if (!released) await CancellationScope.nonCancellable(() => releaseCapacity(key));
    }
    // A pruned or timed-out run is a verdict on the configuration, not a crash: relaunching cannot help.
    if (outcome.status !== 'failed') break;
  }
  if (budgetStop !== undefined) {
    await orch.finishExperiment({ experimentId: input.experimentId, status: 'failed', error: budgetStop });
    return { experimentId: input.experimentId, status: 'failed', attempts: attempt, error: budgetStop, budgetExceeded: true };
  }
  if (!outcome || outcome.status !== 'succeeded') {
    const status = outcome?.status ?? 'failed';
    await orch.finishExperiment({ experimentId: input.experimentId, status, error: outcome?.error });
    return { experimentId: input.experimentId, status, attempts: attempt, error: outcome?.error };
  }
  const checkpointId = outcome.checkpointId!;
  let publicMetrics: Record<string, number> | undefined;
  if (!input.skipPublic) {
    try {
      const scored = await scoreCheckpoint({ checkpointId, suiteId: input.suiteId, split: 'public', purpose: 'select' });
      publicMetrics = scored.metrics;
    } catch (e) {
      // A trainer whose predictions break the contract fails this experiment (recorded, with the reason), not the
      // loop.
      const broken = brokenContract(e);
      if (broken === undefined) throw e;
      await orch.finishExperiment({ experimentId: input.experimentId, status: 'failed', error: broken });
      return { experimentId: input.experimentId, status: 'failed', attempts: attempt, error: broken };
    }
  }
  await orch.finishExperiment({ experimentId: input.experimentId, status: 'succeeded', checkpointId });
  return { experimentId: input.experimentId, status: 'succeeded', checkpointId, attempts: attempt, publicMetrics };
}

/** What scoring found wrong with the trainer's output, when `e` is one of the contract errors; else undefined. */
function brokenContract(e: unknown): string | undefined {
  const contract = ['PredictionsMismatchError', 'ChecksumMismatchError', 'ContractViolationError', 'CheckpointFormatError'];
  if (e instanceof ActivityFailure && e.cause instanceof ApplicationFailure && contract.includes(e.cause.type ?? ''))
    return `scoring the public split: ${e.cause.message}`;
  return undefined;
}

/** The cost cap's message when `e` is launchTraining refusing on BudgetExceededError. */
function budgetExceeded(e: unknown): string | undefined {
  if (e instanceof ActivityFailure && e.cause instanceof ApplicationFailure && e.cause.type === 'BudgetExceededError')
    return e.cause.message;
  return undefined;
}
