// experiment: one configuration, trained (relaunched per the spec's attempts when the trainer fails),
// then scored on the public split. The held-out split is never scored here: the inner loop asks for it
// only for its winner, so it cannot steer the search. Each training attempt holds a capacity slot from before its
// launch until its end (acquireCapacity waits inside one activity), and a launch the cost cap refuses ends the
// experiment as failed with `budgetExceeded`, which stops the inner loop. Since FEWER_ROUND_TRIPS, one runTraining
// activity does an attempt's acquire, launch, await and release (the release again here only when it ends without an
// outcome), and finishExperiment is a local activity: 3 workflow tasks per experiment instead of 7. Since
// SCORED_WITH_TRAINING, a warm-trained campaign's experiment (input.scoreWithTraining) has its public split scored by
// the runTraining that trained it, not by a scoreCheckpoint activity of its own: one activity per experiment. Since
// ENDED_WITH_SCORE, that runTraining also records the experiment's success with its score (outcome.experimentEnded),
// and the workflow's own finishExperiment is left out: no local activity after it.
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
import { CONTRACT_ERROR_TYPES, publicScoringBroke } from '../contracts/eval';

/** The patch id of the one-activity training attempt and the local finishExperiment (see the header). */
export const FEWER_ROUND_TRIPS = 'experiment-fewer-round-trips';

/** The patch id of the public split scored by the training attempt's own runTraining (see the header). */
export const SCORED_WITH_TRAINING = 'experiment-scored-with-training';

/** The patch id of the experiment's success recorded by the runTraining that scored it (see the header). */
export const ENDED_WITH_SCORE = 'experiment-ended-with-score';

export async function experiment(input: ExperimentInput): Promise<ExperimentResult> {
  const fewer = patched(FEWER_ROUND_TRIPS);
  // Asked only where the loop's settings say so, so a history recorded without it replays without the marker.
  const fused = fewer && input.scoreWithTraining === true && !input.skipPublic && patched(SCORED_WITH_TRAINING);
  const acts = experimentActivities(input, fewer);
  const { experimentId } = input;
  const { outcome, attempts, budgetStop } = await train(acts, input, fewer, fused);
  if (budgetStop !== undefined)
    return endUnscored(acts, { experimentId, status: 'failed', attempts, error: budgetStop, budgetExceeded: true });
  if (!outcome || outcome.status !== 'succeeded')
    return endUnscored(acts, { experimentId, status: outcome?.status ?? 'failed', attempts, error: outcome?.error });
  const checkpointId = outcome.checkpointId!;
  const scored = input.skipPublic
    ? {}
    : fused
      ? { metrics: outcome.publicMetrics, broken: outcome.scoringBroke }
      : await scorePublic(acts, input, checkpointId);
  if (scored.broken !== undefined) return endUnscored(acts, { experimentId, status: 'failed', attempts, error: scored.broken });
  // Asked only when the outcome says so, so a history recorded before (no experimentEnded in it) replays without it.
  const endedWithScore = fused && outcome.experimentEnded === true && patched(ENDED_WITH_SCORE);
  if (!endedWithScore) await acts.orch.finishExperiment({ experimentId, status: 'succeeded', checkpointId });
  return { experimentId, status: 'succeeded', checkpointId, attempts, publicMetrics: scored.metrics };
}

type Activities = ReturnType<typeof experimentActivities>;

/** The activity proxies: finishExperiment local since FEWER_ROUND_TRIPS (an orchestration activity before it). */
function experimentActivities(input: ExperimentInput, fewer: boolean) {
  const orch = fewer
    ? proxyLocalActivities<OrchestrationActivities>(bookkeepingOptions())
    : proxyActivities<OrchestrationActivities>(orchestrationOptions(queueOf('orchestration')));
  const { launchTraining, releaseCapacity } = proxyActivities<TrainingActivities>(launchOptions(queueOf('training')));
  const { awaitTraining } = proxyActivities<TrainingActivities>(awaitOptions(queueOf('training'), input.trainingTimeoutSeconds));
  const { acquireCapacity } = proxyActivities<TrainingActivities>(capacityOptions(queueOf('training')));
  const { runTraining } = proxyActivities<TrainingActivities>(trainingOptions(queueOf('training'), input.trainingTimeoutSeconds));
  const { scoreCheckpoint } = proxyActivities<EvalActivities>(evalOptions(queueOf('eval')));
  return { orch, launchTraining, releaseCapacity, awaitTraining, acquireCapacity, runTraining, scoreCheckpoint };
}

/** Training attempts until one does not fail, the attempts run out, or the cost cap refuses a launch (budgetStop). */
async function train(
  acts: Activities,
  input: ExperimentInput,
  fewer: boolean,
  fused: boolean,
): Promise<{ outcome?: TrainingOutcome; attempts: number; budgetStop?: string }> {
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
        outcome = await runAttempt(acts, input, attempt, fused);
        released = true;
      } else {
        await acts.acquireCapacity(key);
        outcome = await launchAndAwait(acts, input, attempt);
      }
    } catch (e) {
      budgetStop = budgetExceeded(e);
      if (budgetStop === undefined) throw e;
      break;
    } finally {
      // On failure and on cancellation too: a cancelled scope could not schedule it, so it runs outside.
      if (!released) await CancellationScope.nonCancellable(() => acts.releaseCapacity(key));
    }
    // A pruned or timed-out run is a verdict on the configuration, not a crash: relaunching cannot help.
    if (outcome.status !== 'failed') break;
  }
  return { outcome, attempts: attempt, budgetStop };
}

/** One attempt in one activity: acquire, launch, await and release (FEWER_ROUND_TRIPS); and score (`fused`). */
function runAttempt(acts: Activities, input: ExperimentInput, attempt: number, fused: boolean): Promise<TrainingOutcome> {
  return acts.runTraining({
    experimentId: input.experimentId,
    attempt,
    innerLoopId: input.innerLoopId,
    pruning: input.pruning,
    timeoutSeconds: input.trainingTimeoutSeconds,
    ...(fused ? { scorePublic: { suiteId: input.suiteId } } : {}),
  });
}

/** One attempt before FEWER_ROUND_TRIPS, once its slot is acquired: launch, then await its end. */
async function launchAndAwait(acts: Activities, input: ExperimentInput, attempt: number): Promise<TrainingOutcome> {
  const { runId, handle } = await acts.launchTraining({ experimentId: input.experimentId, attempt });
  return acts.awaitTraining({
    runId,
    experimentId: input.experimentId,
    innerLoopId: input.innerLoopId,
    handle,
    pruning: input.pruning,
    timeoutSeconds: input.trainingTimeoutSeconds,
  });
}

/** The checkpoint's public metrics; or, when the trainer's predictions break the contract, why (not the loop's failure). */
async function scorePublic(
  acts: Activities,
  input: ExperimentInput,
  checkpointId: string,
): Promise<{ metrics?: Record<string, number>; broken?: string }> {
  try {
    const scored = await acts.scoreCheckpoint({ checkpointId, suiteId: input.suiteId, split: 'public', purpose: 'select' });
    return { metrics: scored.metrics };
  } catch (e) {
    const broken = brokenContract(e);
    if (broken === undefined) throw e;
    return { broken };
  }
}

/** Records an experiment that ended without a scored checkpoint; its result. */
async function endUnscored(acts: Activities, r: ExperimentResult): Promise<ExperimentResult> {
  await acts.orch.finishExperiment({ experimentId: r.experimentId, status: r.status, error: r.error });
  return r;
}

/** What scoring found wrong with the trainer's output, when `e` is one of the contract errors; else undefined. */
function brokenContract(e: unknown): string | undefined {
  if (e instanceof ActivityFailure && e.cause instanceof ApplicationFailure && CONTRACT_ERROR_TYPES.includes(e.cause.type ?? ''))
    return publicScoringBroke(e.cause.message);
  return undefined;
}

/** The cost cap's message when `e` is launchTraining refusing on BudgetExceededError. */
function budgetExceeded(e: unknown): string | undefined {
  if (e instanceof ActivityFailure && e.cause instanceof ApplicationFailure && e.cause.type === 'BudgetExceededError')
    return e.cause.message;
  return undefined;
}
