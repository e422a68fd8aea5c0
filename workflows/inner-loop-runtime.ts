// What one innerLoop execution holds beside the state it carries across continue-as-new: its ids, its activity
// proxies, and the mutable fields its signal, update and query handlers share with its steps. One object, so a
// handler and a step always read and write the same field, never a copy a closure captured.
import { proxyActivities, workflowInfo, type ActivityInterfaceFor } from '@temporalio/workflow';
import { campaignIdOfVersion } from '../contracts/campaign';
import type { EvalActivities, OrchestrationActivities, TrainingActivities } from '../contracts/activities';
import type { InnerLoopInput, InnerLoopResult, InnerLoopState, InnerLoopStatus } from '../contracts/inner-loop';
import { agentOptions, evalOptions, launchOptions, orchestrationOptions } from './activity-options';
import { queueOf } from './queues';

export interface InnerLoopRuntime {
  input: InnerLoopInput;
  innerLoopId: string;
  /** The loop runs the campaign version it was started with, to its end (and across continue-as-new). */
  campaignVersionId: string;
  campaignId: string;
  orch: ActivityInterfaceFor<OrchestrationActivities>;
  evals: Pick<ActivityInterfaceFor<EvalActivities>, 'scoreCheckpoint' | 'checkContamination'>;
  /** The proposer and the analyst, with the agents' longer timeouts. */
  agents: ActivityInterfaceFor<Pick<OrchestrationActivities, 'proposeExperiments' | 'analyzeBatch'>>;
  checkTrainer: ActivityInterfaceFor<TrainingActivities>['checkTrainer'];
  phase: InnerLoopStatus['phase'];
  stopRequested: boolean;
  /** Experiments whose child runs now. */
  running: Set<string>;
  /** Proposals awaiting a researcher (undefined) or answered (true: approved). */
  approvals: Map<string, boolean | undefined>;
  /** Undefined while the loop prepares: the carry, or what prepareInnerLoop builds. */
  state?: InnerLoopState;
  /** Pause and resume sent while the loop prepares (no state yet): the last one applies once it exists. */
  earlyPause?: boolean;
  /** An experiment refused by the campaign's cost cap (its message): no more proposals. */
  budgetStop?: string;
  /** The baseline trains alongside the first batch; its failure is raised when the loop needs it. */
  baselineDone?: Promise<void>;
  baselineError?: unknown;
  stoppedBy: InnerLoopResult['stoppedBy'];
  /** Researcher patches queued when the running batch was proposed (state.queuedPatches' first ones). */
  patchesInBatch?: number;
}

/** The loop once it has its state: every step from the first batch on. */
export type RunningInnerLoop = InnerLoopRuntime & { state: InnerLoopState };

export function isRunning(loop: InnerLoopRuntime): loop is RunningInnerLoop {
  return loop.state !== undefined;
}

/** The runtime of this execution: ids, activity proxies, and the carried state if this run continues one. */
export function openInnerLoop(input: InnerLoopInput): InnerLoopRuntime {
  const { campaignVersionId } = input;
  const { scoreCheckpoint, checkContamination } = proxyActivities<EvalActivities>(evalOptions(queueOf('eval')));
  return {
    input,
    innerLoopId: workflowInfo().workflowId,
    campaignVersionId,
    campaignId: campaignIdOfVersion(campaignVersionId),
    orch: proxyActivities<OrchestrationActivities>(orchestrationOptions(queueOf('orchestration'))),
    evals: { scoreCheckpoint, checkContamination },
    agents: proxyActivities<Pick<OrchestrationActivities, 'proposeExperiments' | 'analyzeBatch'>>(agentOptions(queueOf('orchestration'))),
    checkTrainer: proxyActivities<TrainingActivities>(launchOptions(queueOf('training'))).checkTrainer,
    phase: 'preparing',
    stopRequested: false,
    running: new Set<string>(),
    approvals: new Map<string, boolean | undefined>(),
    state: input.carry,
    stoppedBy: 'budget',
  };
}
