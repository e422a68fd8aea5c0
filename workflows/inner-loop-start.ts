// The inner loop's first steps: check the trainer and build the loop's state (a fresh start only), mark the
// execution running, start the untrained baseline; and how the loop starts an `experiment` child.
import { ApplicationFailure, executeChild, ParentClosePolicy, patched, upsertSearchAttributes } from '@temporalio/workflow';
import type { ExperimentInput, ExperimentResult } from '../contracts/experiment';
import type { InnerLoopState } from '../contracts/inner-loop';
import { CampaignId, Iteration, LoopKind } from '../contracts/search-attributes';
import { experiment } from './experiment';
import type { InnerLoopRuntime, RunningInnerLoop } from './inner-loop-runtime';
import { queueOf } from './queues';

/** A fresh start's preparation, before the first batch: trainer check, settings, task, contamination, baseline row. */
export async function prepareInnerLoop(loop: InnerLoopRuntime): Promise<RunningInnerLoop> {
  const { input, campaignVersionId, orch } = loop;
  // Before the first write: a trainer that cannot start on the training worker ends the loop here, with the reason.
  const trainer = await loop.checkTrainer({ campaignVersionId });
  if (!trainer.ok) throw ApplicationFailure.nonRetryable(trainer.reason, 'TrainerCannotStart');
  const settings = await orch.loopSettings({ campaignVersionId });
  if (input.budget?.experiments !== undefined) settings.experiments = input.budget.experiments;
  if (input.budget?.parallelism !== undefined) settings.parallelism = input.budget.parallelism;
  const task = await orch.prepareTask({ campaignVersionId, datasetVersionId: input.datasetVersionId });
  // Before any training run: a dataset version that overlaps an eval split or carries a canary is refused.
  await loop.evals.checkContamination({ datasetVersionId: task.datasetVersionId, reader: loop.innerLoopId });
  const baseline = await orch.startInnerLoop({
    campaignId: loop.campaignId,
    campaignVersionId,
    innerLoopId: loop.innerLoopId,
    datasetVersionId: task.datasetVersionId,
    baseCheckpointId: input.baseCheckpointId,
  });
  const state: InnerLoopState = {
    settings,
    task,
    baseline: { experimentId: baseline.experimentId },
    launched: 0,
    batches: 0,
    batchesWithoutImprovement: 0,
    leaderboard: [],
    paused: false,
  };
  if (loop.earlyPause !== undefined) state.paused = loop.earlyPause;
  loop.state = state;
  // The same object, now with its state: the handlers hold it.
  return loop as RunningInnerLoop;
}

export function markRunning(loop: RunningInnerLoop): void {
  upsertSearchAttributes([
    { key: CampaignId, value: loop.campaignId },
    { key: LoopKind, value: 'inner' },
    { key: Iteration, value: loop.input.iteration ?? 0 },
  ]);
  loop.phase = 'running';
}

/** Starts the untrained baseline's child (unless a carried state has its checkpoint); baselineRun awaits it. */
export function startBaseline(loop: RunningInnerLoop): void {
  const s = loop.state;
  loop.baselineDone = s.baseline.checkpointId
    ? Promise.resolve()
    : runChild(loop, s.baseline.experimentId, true).then(
        (r) => {
          if (r.status === 'succeeded') s.baseline.checkpointId = r.checkpointId;
          // Out of budget is the campaign's end, not the baseline's fault: the result simply has no baseline.
          else if (budgetStopped(r)) loop.budgetStop ??= r.error;
          else
            loop.baselineError = ApplicationFailure.nonRetryable(`the untrained baseline failed: ${r.error ?? r.status}`, 'BaselineFailed');
        },
        (e: unknown) => void (loop.baselineError = e),
      );
}

/**
 * A fresh loop's search waits for its untrained baseline (issue 34): a baseline that fails (a model that cannot be
 * loaded, a trainer that crashes) ends the loop with the trainer's own reason before any experiment is proposed or
 * launched, instead of every experiment failing the same way beside it. The price is the baseline's run time before
 * the first batch. Histories recorded before the patch ran the baseline alongside the first batch, and replay so.
 */
export const BASELINE_FIRST_PATCH = 'inner-baseline-first';

/** Whether the search waits for the baseline: a fresh start (no baseline checkpoint carried) under the patch. */
export function baselineFirst(loop: RunningInnerLoop): boolean {
  return loop.state.baseline.checkpointId === undefined && patched(BASELINE_FIRST_PATCH);
}

/** Waits for the baseline's child; raises its failure. */
export async function baselineRun(loop: InnerLoopRuntime): Promise<void> {
  await loop.baselineDone;
  if (loop.baselineError) throw loop.baselineError;
}

/** An experiment refused by the campaign's cost cap. */
export const budgetStopped = (r: ExperimentResult): boolean => r.budgetExceeded === true;

/**
 * Experiments as coroutines of the loop's workflow, when the spec asks (innerLoop.experimentWorkflows: inline): the
 * same `experiment` function with the same input, its activities scheduled by the loop itself, without the child's
 * start, its own workflow tasks and its result's round trip (docs/scale.md, "Experiments inline"). The activities'
 * idempotency is keyed by the experiment and attempt, not by the workflow, so a retried or replayed one behaves as in
 * a child. Continue-as-new happens only between batches, when no experiment runs.
 */
export const INLINE_EXPERIMENTS_PATCH = 'experiments-inline';

/** Runs one experiment as a child, or inline (skipPublic: the baseline, trained but never scored on public). */
export function runChild(loop: RunningInnerLoop, experimentId: string, skipPublic = false): Promise<ExperimentResult> {
  const input = childInput(loop, experimentId, skipPublic);
  if (loop.state.settings.experimentWorkflows === 'inline' && patched(INLINE_EXPERIMENTS_PATCH)) return experiment(input);
  return executeChild(experiment, {
    workflowId: experimentId,
    taskQueue: queueOf('orchestration'),
    args: [input],
    // Cancelling the loop must reach the trainer, so children are cancelled, not abandoned or terminated.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  });
}

function childInput(loop: RunningInnerLoop, experimentId: string, skipPublic: boolean): ExperimentInput {
  const { settings, task } = loop.state;
  return {
    experimentId,
    innerLoopId: loop.innerLoopId,
    suiteId: task.suiteId,
    maxTrainingAttempts: settings.maxTrainingAttempts,
    trainingTimeoutSeconds: settings.trainingTimeoutSeconds,
    pruning: skipPublic ? { ...settings.pruning, rule: 'none' } : settings.pruning,
    skipPublic,
    ...(settings.scoreWithTraining ? { scoreWithTraining: true } : {}),
  };
}
