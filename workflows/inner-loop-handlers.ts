// The inner loop's signals, updates and queries (contracts/inner-loop.ts), set before its first await. They read and
// write the loop's runtime object only, and schedule nothing. Registered in this order: a signal or update that
// arrived before its handler is delivered when the handler is set, so their order is the order of the replies.
import { setHandler } from '@temporalio/workflow';
import { MAX_PARALLELISM } from '../core/temporal-limits';
import {
  approveProposalUpdate,
  leaderboardQuery,
  pauseSignal,
  proposePatchUpdate,
  resumeSignal,
  setBudgetUpdate,
  statusQuery,
  stopSignal,
  type InnerLoopStatus,
} from '../contracts/inner-loop';
import type { InnerLoopRuntime } from './inner-loop-runtime';

export function handleInnerLoopMessages(loop: InnerLoopRuntime): void {
  const setPaused = (paused: boolean) => void (loop.state ? (loop.state.paused = paused) : (loop.earlyPause = paused));
  setHandler(pauseSignal, () => setPaused(true));
  setHandler(resumeSignal, () => setPaused(false));
  setHandler(stopSignal, () => void (loop.stopRequested = true));
  handleBudget(loop);
  handleApprovals(loop);
  handleResearcherPatches(loop);
  setHandler(statusQuery, (): InnerLoopStatus => status(loop));
  setHandler(leaderboardQuery, () => loop.state?.leaderboard ?? []);
}

/** setBudget: a new experiment budget or parallelism, from the next proposal or free place on. */
function handleBudget(loop: InnerLoopRuntime): void {
  setHandler(
    setBudgetUpdate,
    (change) => {
      const s = loop.state!;
      if (change.experiments !== undefined) s.settings.experiments = change.experiments;
      if (change.parallelism !== undefined) s.settings.parallelism = change.parallelism;
      return { experiments: s.settings.experiments, parallelism: s.settings.parallelism };
    },
    {
      validator: (change) => {
        const { state } = loop;
        if (!state) throw new Error('the loop is still preparing; try again in a moment');
        if (change.experiments !== undefined && (!Number.isInteger(change.experiments) || change.experiments < state.launched)) {
          throw new Error(`experiments must be an integer of at least ${state.launched} (already launched)`);
        }
        if (change.parallelism !== undefined && (!Number.isInteger(change.parallelism) || change.parallelism < 1)) {
          throw new Error('parallelism must be a positive integer');
        }
        // A validator's refusal writes nothing to history: no patch needed.
        if (change.parallelism !== undefined && change.parallelism > MAX_PARALLELISM) {
          throw new Error(`parallelism must be at most ${MAX_PARALLELISM} (Temporal's limit of pending child workflows)`);
        }
      },
    },
  );
}

/** approveProposal: a researcher's answer to a proposal that awaits one (spec `requireApproval`). */
function handleApprovals(loop: InnerLoopRuntime): void {
  const { approvals } = loop;
  setHandler(
    approveProposalUpdate,
    ({ experimentId, approve }) => {
      approvals.set(experimentId, approve);
      return approve ? `approved ${experimentId}` : `rejected ${experimentId}`;
    },
    {
      validator: ({ experimentId }) => {
        if (!approvals.has(experimentId) || approvals.get(experimentId) !== undefined) {
          throw new Error(`${experimentId} is not awaiting approval (pending: ${awaitingApproval(loop).join(', ') || 'none'})`);
        }
      },
    },
  );
}

/**
 * proposePatch: a researcher's patch, checked and stored (status queued) by `flywheel propose`, joins the next batch.
 * The handler only notes its id; the proposer reads the patch from PostgreSQL. Refused, writing nothing to history,
 * while the loop prepares, once it ends, or when the budget has no experiment left for it.
 */
function handleResearcherPatches(loop: InnerLoopRuntime): void {
  setHandler(
    proposePatchUpdate,
    ({ patchId }) => {
      const queued = (loop.state!.queuedPatches ??= []);
      queued.push(patchId);
      return `${patchId} queued for the next batch of ${loop.innerLoopId} (${queued.length} queued)`;
    },
    {
      validator: ({ patchId }) => {
        const { state } = loop;
        if (!state) throw new Error('the loop is still preparing; try again in a moment');
        if (typeof patchId !== 'string' || patchId === '') throw new Error('patchId must be a recipe patch id');
        if (loop.stopRequested || loop.phase !== 'running')
          throw new Error(`the loop is ${loop.stopRequested ? 'stopping' : loop.phase}: it proposes no more experiments`);
        const queued = state.queuedPatches ?? [];
        if (queued.includes(patchId)) throw new Error(`${patchId} is already queued`);
        const left = state.settings.experiments - state.launched - queued.length;
        if (left < 1)
          throw new Error(
            `no experiment left in the budget (${state.launched} of ${state.settings.experiments} launched, ${queued.length} queued): raise it with flywheel budget`,
          );
      },
    },
  );
}

function awaitingApproval(loop: InnerLoopRuntime): string[] {
  return [...loop.approvals].filter(([, v]) => v === undefined).map(([k]) => k);
}

function status(loop: InnerLoopRuntime): InnerLoopStatus {
  const { state, phase } = loop;
  return {
    phase: state?.paused && phase === 'running' ? 'paused' : phase,
    launched: state?.launched ?? 0,
    budget: state?.settings.experiments ?? loop.input.budget?.experiments ?? 0,
    parallelism: state?.settings.parallelism ?? 0,
    running: [...loop.running],
    awaitingApproval: awaitingApproval(loop),
    best: state?.best,
    batchesWithoutImprovement: state?.batchesWithoutImprovement ?? 0,
    queuedPatches: [...(state?.queuedPatches ?? [])],
  };
}
