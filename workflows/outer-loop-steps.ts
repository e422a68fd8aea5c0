// The outer loop's steps before and after the gate: check the trainer and prepare the task → critiques → a new
// dataset version → `innerLoop` as a child → record the iteration's end (and move production when it promotes).
import { ApplicationFailure, executeChild, ParentClosePolicy, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { OrchestrationActivities } from '../contracts/activities';
import type { ClaimIterationResult } from '../contracts/outer-activities';
import { outerInnerLoopIdOf, type OuterIterationSummary, type OuterLoopResult } from '../contracts/outer-loop';
import type { InnerLoopResult } from '../contracts/inner-loop';
import { Iteration } from '../contracts/search-attributes';
import { innerLoop } from './inner-loop';
import { finish, type OuterIteration, type OuterLoopRuntime } from './outer-loop-runtime';
import { queueOf } from './queues';

export type Approval = Parameters<OrchestrationActivities['finishOuterIteration']>[0]['approval'];

/** The claim pins the campaign version the iteration runs: the input's, else the campaign's latest at the claim. */
export function claimIteration(loop: OuterLoopRuntime): Promise<ClaimIterationResult> {
  const { input } = loop;
  return loop.orch.claimOuterIteration({
    campaignId: input.campaignId,
    campaignVersionId: input.campaignVersionId,
    workflowId: loop.workflowId,
    runId: workflowInfo().runId,
    trigger: input.trigger ?? 'ui',
  });
}

/** A trainer that cannot start on the training worker ends the attempt here, before any critique or dataset row. */
export async function startIteration(
  loop: OuterLoopRuntime,
  claim: Extract<ClaimIterationResult, { claimed: true }>,
): Promise<OuterIteration> {
  const { outerIterationId, settings, campaignVersionId, newFeedback } = claim;
  const trainer = await loop.checkTrainer({ campaignVersionId });
  if (!trainer.ok) throw ApplicationFailure.nonRetryable(trainer.reason, 'TrainerCannotStart');
  const task = await loop.orch.prepareTask({ campaignVersionId });
  const iteration = (loop.iteration = claim.iteration);
  upsertSearchAttributes([{ key: Iteration, value: iteration }]);
  return { outerIterationId, iteration, campaignVersionId, settings, newFeedback, incumbent: claim.incumbentCheckpointId, task };
}

/** Teacher critiques of the users' failures and of the production model's public eval failures; their count. */
export async function critique(loop: OuterLoopRuntime, it: OuterIteration): Promise<number> {
  const { campaignId } = loop.input;
  const { outerIterationId, campaignVersionId, settings, iteration, incumbent, task } = it;
  loop.phase = 'critiquing';
  const feedback = await loop.orch.critiqueIterationFeedback({
    campaignId,
    campaignVersionId,
    outerIterationId,
    sample: settings.feedbackSample,
    seed: iteration,
  });
  let evalCritiques = 0;
  if (incumbent && settings.evalFailureSample > 0) {
    await loop.ev.scoreCheckpoint({ checkpointId: incumbent, suiteId: task.suiteId, split: 'public', purpose: 'critique' });
    const r = await loop.ev.critiqueEvalFailures({
      campaignId,
      campaignVersionId,
      outerIterationId,
      checkpointId: incumbent,
      suiteId: task.suiteId,
      sample: settings.evalFailureSample,
      seed: iteration,
    });
    evalCritiques = r.critiqued;
  }
  return feedback.counts.withExample + feedback.counts.noSignal + evalCritiques;
}

/** The iteration's dataset version; the iteration's summary so far (no candidate yet). */
export async function buildDataset(loop: OuterLoopRuntime, it: OuterIteration, critiques: number): Promise<OuterIterationSummary> {
  const { outerIterationId, iteration, incumbent, task } = it;
  loop.phase = 'building-dataset';
  const dataset = await loop.orch.buildIterationDataset({
    campaignId: loop.input.campaignId,
    campaignVersionId: it.campaignVersionId,
    outerIterationId,
    iteration,
    baseVersionId: task.datasetVersionId,
    incumbentCheckpointId: incumbent,
    suiteId: task.suiteId,
  });
  return {
    outerIterationId,
    iteration,
    status: 'no-candidate',
    reason: '',
    newFeedback: it.newFeedback,
    critiques,
    datasetVersionId: dataset.versionId,
    datasetExamples: dataset.counts.examples,
  };
}

/** The inner loop on the new dataset version (warm-started from production); undefined when it already runs. */
export async function runInnerLoop(
  loop: OuterLoopRuntime,
  it: OuterIteration,
  summary: OuterIterationSummary,
): Promise<InnerLoopResult | undefined> {
  const { settings, incumbent } = it;
  loop.phase = 'inner-loop';
  const innerLoopId = (loop.innerLoopId = outerInnerLoopIdOf(it.outerIterationId));
  summary.innerLoopId = innerLoopId;
  try {
    return await executeChild(innerLoop, {
      workflowId: innerLoopId,
      taskQueue: queueOf('orchestration'),
      args: [
        {
          campaignVersionId: it.campaignVersionId,
          datasetVersionId: summary.datasetVersionId!,
          budget: { ...settings.innerBudget, ...loop.input.innerBudget },
          iteration: it.iteration,
          baseCheckpointId: settings.warmStart && incumbent ? incumbent : undefined,
        },
      ],
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });
  } catch (e) {
    // A dead owner's inner loop that still runs: it is that iteration's; this workflow must not run a second.
    if (e instanceof Error && e.name === 'WorkflowExecutionAlreadyStartedError') return undefined;
    throw e;
  }
}

/** Records the iteration's end (moving production when it promotes); the execution's result. */
export async function recordIteration(
  loop: OuterLoopRuntime,
  it: OuterIteration,
  s: OuterIterationSummary,
  extra: { promote?: boolean; approval?: Approval } = {},
): Promise<OuterLoopResult> {
  loop.phase = 'recording';
  const r = await loop.orch.finishOuterIteration({
    campaignId: loop.input.campaignId,
    outerIterationId: it.outerIterationId,
    summary: s,
    promote: extra.promote ? { candidateCheckpointId: s.candidateCheckpointId!, incumbentCheckpointId: it.incumbent } : undefined,
    approval: extra.approval,
  });
  return finish(loop, { ...s, productionCheckpointId: r.productionCheckpointId ?? undefined });
}
