// innerLoop: propose a batch → run each proposal as an `experiment` child (at most `parallelism` at once)
// → keep the best by the spec's rule on the public split → repeat until the budget, a plateau or a stop.
// Only the winner and the untrained baseline are scored on held-out, after the search is over.
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  executeChild,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { improves } from '../core/loop-settings';
import { MAX_PARALLELISM } from '../core/temporal-limits';
import { campaignIdOfVersion } from '../contracts/campaign';
import type { Proposal } from '../contracts/inner-activities';
import type { EvalActivities, OrchestrationActivities, TrainingActivities } from '../contracts/activities';
import { agentOptions, evalOptions, launchOptions, orchestrationOptions } from './activity-options';
import { experiment } from './experiment';
import type { ExperimentInput, ExperimentResult } from '../contracts/experiment';
import {
  approveProposalUpdate,
  LEADERBOARD_CAP,
  leaderboardQuery,
  pauseSignal,
  resumeSignal,
  setBudgetUpdate,
  statusQuery,
  stopSignal,
  type InnerLoopInput,
  type InnerLoopResult,
  type InnerLoopState,
  type InnerLoopStatus,
  type LeaderEntry,
} from '../contracts/inner-loop';
import { queueOf } from './queues';
import { BestScore, CampaignId, Iteration, LoopKind } from '../contracts/search-attributes';

/** Continue as new past this many history events, even before the server suggests it. */
const HISTORY_EVENTS_LIMIT = 8000;

export async function innerLoop(input: InnerLoopInput): Promise<InnerLoopResult> {
  const innerLoopId = workflowInfo().workflowId;
  // The loop runs the campaign version it was started with, to its end (and across continue-as-new).
  const { campaignVersionId } = input;
  const campaignId = campaignIdOfVersion(campaignVersionId);
  const orch = proxyActivities<OrchestrationActivities>(orchestrationOptions(queueOf('orchestration')));
  const { scoreCheckpoint, checkContamination } = proxyActivities<EvalActivities>(evalOptions(queueOf('eval')));
  const agents = proxyActivities<Pick<OrchestrationActivities, 'proposeExperiments' | 'analyzeBatch'>>(
    agentOptions(queueOf('orchestration')),
  );
  const { checkTrainer } = proxyActivities<TrainingActivities>(launchOptions(queueOf('training')));

  let phase: InnerLoopStatus['phase'] = 'preparing';
  let stopRequested = false;
  const running = new Set<string>();
  const approvals = new Map<string, boolean | undefined>();
  let state: InnerLoopState | undefined = input.carry;

  // Pause and resume sent while the loop prepares (no state yet) are kept, and the last one applies once it exists.
  let earlyPause: boolean | undefined;
  const setPaused = (paused: boolean) => void (state ? (state.paused = paused) : (earlyPause = paused));
  setHandler(pauseSignal, () => setPaused(true));
  setHandler(resumeSignal, () => setPaused(false));
  setHandler(stopSignal, () => void (stopRequested = true));
  setHandler(
    setBudgetUpdate,
    (change) => {
      const s = state!;
      if (change.experiments !== undefined) s.settings.experiments = change.experiments;
      if (change.parallelism !== undefined) s.settings.parallelism = change.parallelism;
      return { experiments: s.settings.experiments, parallelism: s.settings.parallelism };
    },
    {
      validator: (change) => {
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
  setHandler(
    approveProposalUpdate,
    ({ experimentId, approve }) => {
      approvals.set(experimentId, approve);
      return approve ? `approved ${experimentId}` : `rejected ${experimentId}`;
    },
    {
      validator: ({ experimentId }) => {
        if (!approvals.has(experimentId) || approvals.get(experimentId) !== undefined) {
          throw new Error(
            `${experimentId} is not awaiting approval (pending: ${
              [...approvals]
                .filter(([, v]) => v === undefined)
                .map(([k]) => k)
                .join(', ') || 'none'
            })`,
          );
        }
      },
    },
  );
  setHandler(statusQuery, (): InnerLoopStatus => ({
    phase: state?.paused && phase === 'running' ? 'paused' : phase,
    launched: state?.launched ?? 0,
    budget: state?.settings.experiments ?? input.budget?.experiments ?? 0,
    parallelism: state?.settings.parallelism ?? 0,
    running: [...running],
    awaitingApproval: [...approvals].filter(([, v]) => v === undefined).map(([k]) => k),
    best: state?.best,
    batchesWithoutImprovement: state?.batchesWithoutImprovement ?? 0,
  }));
  setHandler(leaderboardQuery, () => state?.leaderboard ?? []);

  if (!state) {
    // Before the first write: a trainer that cannot start on the training worker ends the loop here, with the reason.
    const trainer = await checkTrainer({ campaignVersionId });
    if (!trainer.ok) throw ApplicationFailure.nonRetryable(trainer.reason, 'TrainerCannotStart');
    const settings = await orch.loopSettings({ campaignVersionId });
    if (input.budget?.experiments !== undefined) settings.experiments = input.budget.experiments;
    if (input.budget?.parallelism !== undefined) settings.parallelism = input.budget.parallelism;
    const task = await orch.prepareTask({ campaignVersionId, datasetVersionId: input.datasetVersionId });
    // Before any training run: a dataset version that overlaps an eval split or carries a canary is refused.
    await checkContamination({ datasetVersionId: task.datasetVersionId, reader: innerLoopId });
    const baseline = await orch.startInnerLoop({
      campaignId,
      campaignVersionId,
      innerLoopId,
      datasetVersionId: task.datasetVersionId,
      baseCheckpointId: input.baseCheckpointId,
    });
    state = {
      settings,
      task,
      baseline: { experimentId: baseline.experimentId },
      launched: 0,
      batches: 0,
      batchesWithoutImprovement: 0,
      leaderboard: [],
      paused: false,
    };
    if (earlyPause !== undefined) state.paused = earlyPause;
  }
  const s: InnerLoopState = state;
  upsertSearchAttributes([
    { key: CampaignId, value: campaignId },
    { key: LoopKind, value: 'inner' },
    { key: Iteration, value: input.iteration ?? 0 },
  ]);
  phase = 'running';

  const childInput = (experimentId: string, skipPublic = false): ExperimentInput => ({
    experimentId,
    innerLoopId,
    suiteId: s.task.suiteId,
    maxTrainingAttempts: s.settings.maxTrainingAttempts,
    trainingTimeoutSeconds: s.settings.trainingTimeoutSeconds,
    pruning: skipPublic ? { ...s.settings.pruning, rule: 'none' } : s.settings.pruning,
    skipPublic,
  });
  const runChild = (experimentId: string, skipPublic = false): Promise<ExperimentResult> =>
    executeChild(experiment, {
      workflowId: experimentId,
      taskQueue: queueOf('orchestration'),
      args: [childInput(experimentId, skipPublic)],
      // Cancelling the loop must reach the trainer, so children are cancelled, not abandoned or terminated.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    });

  // An experiment refused by the campaign's cost cap (its message): no more proposals.
  let budgetStop: string | undefined;
  const budgetStopped = (r: ExperimentResult): boolean => r.budgetExceeded === true;

  // The baseline trains alongside the first batch; its failure is raised when the loop needs it.
  let baselineError: unknown;
  const baselineDone = s.baseline.checkpointId
    ? Promise.resolve()
    : runChild(s.baseline.experimentId, true).then(
        (r) => {
          if (r.status === 'succeeded') s.baseline.checkpointId = r.checkpointId;
          // Out of budget is the campaign's end, not the baseline's fault: the result simply has no baseline.
          else if (budgetStopped(r)) budgetStop ??= r.error;
          else baselineError = ApplicationFailure.nonRetryable(`the untrained baseline failed: ${r.error ?? r.status}`, 'BaselineFailed');
        },
        (e: unknown) => void (baselineError = e),
      );
  const baselineRun = async () => {
    await baselineDone;
    if (baselineError) throw baselineError;
  };

  const runProposal = async (p: Proposal): Promise<void> => {
    const entry: LeaderEntry = {
      experimentId: p.experimentId,
      index: p.index,
      params: p.params,
      proposer: p.proposer,
      hypothesis: p.hypothesis,
      status: 'proposed',
    };
    if (s.settings.requireApproval) {
      approvals.set(p.experimentId, undefined);
      entry.status = 'awaiting-approval';
      await condition(() => approvals.get(p.experimentId) !== undefined || stopRequested);
      const approved = approvals.get(p.experimentId) === true;
      approvals.delete(p.experimentId);
      if (!approved) {
        await orch.finishExperiment({
          experimentId: p.experimentId,
          status: 'rejected',
          error: stopRequested ? 'loop stopped before approval' : 'rejected by a researcher',
        });
        return record({ ...entry, status: 'rejected' });
      }
    }
    const free = () => running.size < s.settings.parallelism && !s.paused;
    // Every waiting proposal wakes when one place frees: each re-checks before it takes it, so only one does.
    while (!free()) await condition(free);
    running.add(p.experimentId);
    try {
      const r = await runChild(p.experimentId);
      if (budgetStopped(r)) budgetStop ??= r.error;
      record({
        ...entry,
        status: r.status === 'succeeded' ? 'succeeded' : r.status,
        score: r.publicMetrics?.[s.settings.selection.metric],
      });
    } finally {
      running.delete(p.experimentId);
    }
  };
  const record = (e: LeaderEntry): void => {
    const board = [...s.leaderboard.filter((x) => x.experimentId !== e.experimentId), e];
    const key = (x: LeaderEntry) => (x.score === undefined ? Infinity : s.settings.selection.mode === 'min' ? x.score : -x.score);
    s.leaderboard = board.sort((a, b) => key(a) - key(b) || a.index - b.index).slice(0, LEADERBOARD_CAP);
  };

  let stoppedBy: InnerLoopResult['stoppedBy'] = 'budget';
  while (s.launched < s.settings.experiments) {
    if (s.batchesWithoutImprovement >= s.settings.patience) {
      stoppedBy = 'plateau';
      break;
    }
    await condition(() => !s.paused || stopRequested);
    if (stopRequested) {
      stoppedBy = 'stop';
      break;
    }
    const count = Math.min(s.settings.batchSize, s.settings.experiments - s.launched);
    const proposals = await agents.proposeExperiments({
      campaignId,
      campaignVersionId,
      innerLoopId,
      datasetVersionId: s.task.datasetVersionId,
      startIndex: s.launched,
      count,
    });
    s.launched += proposals.length;
    await Promise.all(proposals.map(runProposal));
    s.batches++;
    // The analyst's account of the batch (a model's, or derived from the numbers), for status, reports and the proposer.
    if (proposals.length > 0) {
      await agents.analyzeBatch({ campaignId, campaignVersionId, innerLoopId, startIndex: proposals[0].index, count: proposals.length });
    }

    const batchBest = s.leaderboard.find((e) => proposals.some((p) => p.experimentId === e.experimentId) && e.score !== undefined);
    if (batchBest && improves(batchBest.score!, s.best?.score, s.settings.selection.mode, s.best ? s.settings.minDelta : 0)) {
      s.best = { experimentId: batchBest.experimentId, score: batchBest.score! };
      s.batchesWithoutImprovement = 0;
      upsertSearchAttributes([{ key: BestScore, value: s.best.score }]);
    } else {
      s.batchesWithoutImprovement++;
    }
    if (stopRequested) {
      stoppedBy = 'stop';
      break;
    }
    if (budgetStop !== undefined) {
      stoppedBy = 'budget';
      break;
    }
    if (
      s.launched < s.settings.experiments &&
      (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > (input.historyEventsLimit ?? HISTORY_EVENTS_LIMIT))
    ) {
      await baselineRun();
      await continueAsNew<typeof innerLoop>({ ...input, carry: s });
    }
  }
  if (stopRequested) stoppedBy = 'stop';
  phase = stopRequested ? 'stopping' : 'scoring-winner';
  await baselineRun();
  phase = 'scoring-winner';
  const best = await orch.selectBest({ innerLoopId, metric: s.settings.selection.metric, mode: s.settings.selection.mode });
  const heldout: InnerLoopResult['heldout'] = {};
  if (best)
    heldout.best = (
      await scoreCheckpoint({ checkpointId: best.checkpointId, suiteId: s.task.suiteId, split: 'heldout', purpose: 'winner' })
    ).metrics;
  if (s.baseline.checkpointId) {
    heldout.baseline = (
      await scoreCheckpoint({ checkpointId: s.baseline.checkpointId, suiteId: s.task.suiteId, split: 'heldout', purpose: 'baseline' })
    ).metrics;
  }
  const result: InnerLoopResult = {
    innerLoopId,
    experiments: s.launched,
    stoppedBy,
    best: best
      ? { experimentId: best.experimentId, checkpointId: best.checkpointId, params: best.params, publicScore: best.publicScore }
      : undefined,
    heldout,
    baselineCheckpointId: s.baseline.checkpointId,
    ...(budgetStop !== undefined ? { budgetExceeded: budgetStop } : {}),
  };
  await orch.finishInnerLoop({
    innerLoopId,
    status: stoppedBy === 'stop' ? 'stopped' : 'completed',
    bestExperimentId: best?.experimentId,
    summary: { ...result },
  });
  phase = 'done';
  return result;
}
