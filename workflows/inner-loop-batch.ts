// One batch of the inner loop: propose → run each proposal as an `experiment` child (awaiting a researcher's
// approval first where the spec asks, at most `parallelism` at once) → the analyst's account → keep the batch's best.
//
// Steps that schedule a command and hand its result to the next step are plain functions returning the command's
// promise, which innerLoop awaits itself; runProposal keeps its awaits in one function. An extra `await` of an
// async wrapper would move the loop's next command a microtask later, after the reply to an update delivered in the
// same workflow task instead of before it: a different order of commands than the recorded histories.
import { condition, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { improves } from '../core/loop-settings';
import type { Proposal } from '../contracts/inner-activities';
import { LOOP_HISTORY_EVENTS_LIMIT } from '../core/temporal-limits';
import { LEADERBOARD_CAP, type InnerLoopResult, type LeaderEntry } from '../contracts/inner-loop';
import { BestScore } from '../contracts/search-attributes';
import type { RunningInnerLoop } from './inner-loop-runtime';
import { budgetStopped, runChild } from './inner-loop-start';

const ENDS: Record<InnerLoopResult['stoppedBy'], (loop: RunningInnerLoop) => boolean> = {
  // A researcher's queued patch is a new idea to try: the loop runs it before it gives up on a plateau.
  plateau: ({ state }) => state.batchesWithoutImprovement >= state.settings.patience && !state.queuedPatches?.length,
  stop: (loop) => loop.stopRequested,
  budget: (loop) => loop.budgetStop !== undefined,
};

/** Whether the loop ends here for this reason (a plateau, a stop, the cost cap); if so it is the result's stoppedBy. */
export function endsBy(loop: RunningInnerLoop, reason: InnerLoopResult['stoppedBy']): boolean {
  if (!ENDS[reason](loop)) return false;
  loop.stoppedBy = reason;
  return true;
}

/** Resolves once the loop is not paused, or a stop is asked for. */
export function unpausedOrStopped(loop: RunningInnerLoop): Promise<void> {
  return condition(() => !loop.state.paused || loop.stopRequested);
}

/**
 * The proposer's next batch: up to batchSize, within the budget, grown to hold every researcher patch queued by now
 * (the proposer takes them first, from PostgreSQL); runBatch then drops those from the queue.
 */
export function proposeBatch(loop: RunningInnerLoop): Promise<Proposal[]> {
  const s = loop.state;
  const queued = s.queuedPatches?.length ?? 0;
  loop.patchesInBatch = queued;
  return loop.agents.proposeExperiments({
    campaignId: loop.campaignId,
    campaignVersionId: loop.campaignVersionId,
    innerLoopId: loop.innerLoopId,
    datasetVersionId: s.task.datasetVersionId,
    startIndex: s.launched,
    count: Math.min(Math.max(s.settings.batchSize, queued), s.settings.experiments - s.launched),
  });
}

/** Counts the batch as launched and runs its proposals, each as soon as a place is free. */
export function runBatch(loop: RunningInnerLoop, proposals: Proposal[]): Promise<void[]> {
  loop.state.launched += proposals.length;
  // Only those queued before the proposer was asked: one queued while it ran may be stored after it read the queue.
  if (loop.patchesInBatch) loop.state.queuedPatches?.splice(0, loop.patchesInBatch);
  loop.patchesInBatch = 0;
  return Promise.all(proposals.map((p) => runProposal(loop, p)));
}

/** The analyst's account of the batch (a model's, or derived from the numbers), for status, reports and the proposer. */
export function analyzeBatch(loop: RunningInnerLoop, proposals: Proposal[]): Promise<unknown> {
  return loop.agents.analyzeBatch({
    campaignId: loop.campaignId,
    campaignVersionId: loop.campaignVersionId,
    innerLoopId: loop.innerLoopId,
    startIndex: proposals[0].index,
    count: proposals.length,
  });
}

/** The batch's best becomes the loop's best if it improves on it by minDelta; else one more batch without improvement. */
export function keepBatchBest(loop: RunningInnerLoop, proposals: Proposal[]): void {
  const s = loop.state;
  const batchBest = s.leaderboard.find((e) => proposals.some((p) => p.experimentId === e.experimentId) && e.score !== undefined);
  if (batchBest && improves(batchBest.score!, s.best?.score, s.settings.selection.mode, s.best ? s.settings.minDelta : 0)) {
    s.best = { experimentId: batchBest.experimentId, score: batchBest.score! };
    s.batchesWithoutImprovement = 0;
    upsertSearchAttributes([{ key: BestScore, value: s.best.score }]);
  } else {
    s.batchesWithoutImprovement++;
  }
}

/** Whether to continue as new before the next batch: the history is long, and experiments remain. */
export function historyIsLong(loop: RunningInnerLoop): boolean {
  const s = loop.state;
  const info = workflowInfo();
  return (
    s.launched < s.settings.experiments &&
    (info.continueAsNewSuggested || info.historyLength > (loop.input.historyEventsLimit ?? LOOP_HISTORY_EVENTS_LIMIT))
  );
}

/** One proposal: approval if the spec asks for it, a free place, its child, its row on the leaderboard. */
async function runProposal(loop: RunningInnerLoop, p: Proposal): Promise<void> {
  const { state: s, approvals, running } = loop;
  const entry = leaderEntry(p);
  if (s.settings.requireApproval) {
    approvals.set(p.experimentId, undefined);
    entry.status = 'awaiting-approval';
    await condition(() => approvals.get(p.experimentId) !== undefined || loop.stopRequested);
    const approved = approvals.get(p.experimentId) === true;
    approvals.delete(p.experimentId);
    if (!approved) {
      const error = loop.stopRequested ? 'loop stopped before approval' : 'rejected by a researcher';
      await loop.orch.finishExperiment({ experimentId: p.experimentId, status: 'rejected', error });
      return record(loop, { ...entry, status: 'rejected' });
    }
  }
  const free = () => running.size < s.settings.parallelism && !s.paused;
  // Every waiting proposal wakes when one place frees: each re-checks before it takes it, so only one does.
  while (!free()) await condition(free);
  running.add(p.experimentId);
  try {
    const r = await runChild(loop, p.experimentId);
    if (budgetStopped(r)) loop.budgetStop ??= r.error;
    record(loop, {
      ...entry,
      status: r.status === 'succeeded' ? 'succeeded' : r.status,
      score: r.publicMetrics?.[s.settings.selection.metric],
    });
  } finally {
    running.delete(p.experimentId);
  }
}

function leaderEntry(p: Proposal): LeaderEntry {
  return {
    experimentId: p.experimentId,
    index: p.index,
    params: p.params,
    proposer: p.proposer,
    hypothesis: p.hypothesis,
    status: 'proposed',
  };
}

/** The leaderboard with `e` in its place: best first by the selection rule, then by index, capped. */
function record(loop: RunningInnerLoop, e: LeaderEntry): void {
  const s = loop.state;
  const board = [...s.leaderboard.filter((x) => x.experimentId !== e.experimentId), e];
  const key = (x: LeaderEntry) => (x.score === undefined ? Infinity : s.settings.selection.mode === 'min' ? x.score : -x.score);
  s.leaderboard = board.sort((a, b) => key(a) - key(b) || a.index - b.index).slice(0, LEADERBOARD_CAP);
}
