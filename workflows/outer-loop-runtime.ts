// What one outerLoop execution holds: its activity proxies, the summaries carried across continue-as-new, and the
// fields its status query and approval update share with its steps, in one object; and the claimed iteration.
import { proxyActivities, setHandler, workflowInfo, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { OuterSettings } from '../core/loop-settings';
import type { PreparedTask } from '../contracts/campaign';
import type { EvalActivities, OrchestrationActivities, TrainingActivities } from '../contracts/activities';
import {
  approvePromotionUpdate,
  outerStatusQuery,
  type OuterIterationSummary,
  type OuterLoopInput,
  type OuterLoopResult,
  type OuterLoopStatus,
  type PromotionEvidence,
} from '../contracts/outer-loop';
import { evalOptions, launchOptions, orchestrationOptions } from './activity-options';
import { queueOf } from './queues';

export interface OuterLoopRuntime {
  input: OuterLoopInput;
  workflowId: string;
  orch: ActivityInterfaceFor<OrchestrationActivities>;
  ev: ActivityInterfaceFor<EvalActivities>;
  checkTrainer: ActivityInterfaceFor<TrainingActivities>['checkTrainer'];
  /** The iterations this execution and the ones it continues ran. */
  done: OuterIterationSummary[];
  phase: OuterLoopStatus['phase'];
  iteration?: number;
  innerLoopId?: string;
  /** The evidence a researcher is asked to answer, while the loop awaits the answer. */
  pending?: PromotionEvidence;
  answer?: { approve: boolean; by: string; note?: string };
}

/** The iteration this execution claimed and prepared. */
export interface OuterIteration {
  outerIterationId: string;
  iteration: number;
  /** The campaign version the claim pinned: the input's, else the campaign's latest at the claim. */
  campaignVersionId: string;
  settings: OuterSettings;
  newFeedback: number;
  /** The production checkpoint when the iteration began (null before the first promotion). */
  incumbent: string | null;
  task: PreparedTask;
}

export function openOuterLoop(input: OuterLoopInput): OuterLoopRuntime {
  return {
    input,
    workflowId: workflowInfo().workflowId,
    orch: proxyActivities<OrchestrationActivities>(orchestrationOptions(queueOf('orchestration'))),
    ev: proxyActivities<EvalActivities>(evalOptions(queueOf('eval'))),
    checkTrainer: proxyActivities<TrainingActivities>(launchOptions(queueOf('training'))).checkTrainer,
    done: [...(input.carry?.done ?? [])],
    phase: 'claiming',
  };
}

/** The status query and the approvePromotion update, accepted only while a promotion awaits an answer. */
export function handleOuterLoopMessages(loop: OuterLoopRuntime): void {
  setHandler(outerStatusQuery, (): OuterLoopStatus => ({
    phase: loop.phase,
    iteration: loop.iteration,
    innerLoopId: loop.innerLoopId,
    awaitingApproval: loop.pending,
    done: loop.done,
  }));
  setHandler(
    approvePromotionUpdate,
    ({ approve, by, note }) => {
      loop.answer = { approve, by: by ?? 'a researcher', note };
      return `${approve ? 'approved' : 'rejected'} the promotion of ${loop.pending!.candidateCheckpointId}`;
    },
    {
      validator: (_answer) => {
        if (!loop.pending || loop.answer) throw new Error(`no promotion awaits approval in ${loop.workflowId} (phase: ${loop.phase})`);
      },
    },
  );
}

/** Ends the execution with `s` as its last iteration's summary. */
export function finish(loop: OuterLoopRuntime, s: OuterIterationSummary): OuterLoopResult {
  loop.done.push(s);
  loop.phase = 'done';
  return { iterations: loop.done };
}
