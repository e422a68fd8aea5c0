// outerLoop: one iteration of the campaign's outer loop per execution — claim the feedback since the last
// watermark → teacher critiques (user failures, and the production model's public eval failures) → a new dataset
// version → `innerLoop` as a child (warm-started from production) → the promotion gate on the held-out split →
// optionally a researcher's approval → record the decision and move production → continue-as-new while
// `iterations` asks for more. Schedules, the CLI and the Temporal UI all start it the same way. An iteration that
// fails ends its row with the reason (failOuterIteration) before the workflow fails, so the next start makes a new
// attempt of it with ids of its own.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  ContinueAsNew,
  continueAsNew,
  executeChild,
  ParentClosePolicy,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { EvalActivities, OrchestrationActivities, TrainingActivities } from '../contracts/activities';
import { evalOptions, launchOptions, orchestrationOptions } from './activity-options';
import { experiment } from './experiment';
import { innerLoop } from './inner-loop';
import type { InnerLoopResult } from '../contracts/inner-loop';
import {
  approvePromotionUpdate,
  OUTER_SUMMARY_CAP,
  outerInnerLoopIdOf,
  outerStatusQuery,
  type OuterIterationSummary,
  type OuterLoopInput,
  type OuterLoopResult,
  type OuterLoopStatus,
  type PromotionEvidence,
} from '../contracts/outer-loop';
import { failureReason } from '../contracts/failure-reason';
import { promotionDetails } from './promotion-details';
import { queueOf } from './queues';
import { CampaignId, Iteration, LoopKind } from '../contracts/search-attributes';

/** The seed reruns before the gate (promotion.noise): executions started before it gate without them. */
export const SEED_NOISE_PATCH = 'gate-seed-noise';
/** The seed reruns scored on public as well: the reference model of the gate's held-out leak check. */
export const SEED_REFERENCE_PATCH = 'gate-seed-reference';

export async function outerLoop(input: OuterLoopInput): Promise<OuterLoopResult> {
  const workflowId = workflowInfo().workflowId;
  const orch = proxyActivities<OrchestrationActivities>(orchestrationOptions(queueOf('orchestration')));
  const ev = proxyActivities<EvalActivities>(evalOptions(queueOf('eval')));
  const { checkTrainer } = proxyActivities<TrainingActivities>(launchOptions(queueOf('training')));
  const done: OuterIterationSummary[] = [...(input.carry?.done ?? [])];

  let phase: OuterLoopStatus['phase'] = 'claiming';
  let iteration: number | undefined;
  let innerLoopId: string | undefined;
  let pending: PromotionEvidence | undefined;
  let answer: { approve: boolean; by: string; note?: string } | undefined;
  setHandler(outerStatusQuery, (): OuterLoopStatus => ({ phase, iteration, innerLoopId, awaitingApproval: pending, done }));
  setHandler(
    approvePromotionUpdate,
    ({ approve, by, note }) => {
      answer = { approve, by: by ?? 'a researcher', note };
      return `${approve ? 'approved' : 'rejected'} the promotion of ${pending!.candidateCheckpointId}`;
    },
    {
      validator: (_answer) => {
        if (!pending || answer) throw new Error(`no promotion awaits approval in ${workflowId} (phase: ${phase})`);
      },
    },
  );
  upsertSearchAttributes([
    { key: CampaignId, value: input.campaignId },
    { key: LoopKind, value: 'outer' },
  ]);

  // The claim pins the campaign version the iteration runs: the input's, else the campaign's latest at the claim.
  const claim = await orch.claimOuterIteration({
    campaignId: input.campaignId,
    campaignVersionId: input.campaignVersionId,
    workflowId,
    runId: workflowInfo().runId,
    trigger: input.trigger ?? 'ui',
  });
  const finish = (s: OuterIterationSummary): OuterLoopResult => {
    done.push(s);
    phase = 'done';
    return { iterations: done };
  };
  if (!claim.claimed)
    return finish({ outerIterationId: '', iteration: 0, status: 'skipped', reason: claim.reason, newFeedback: 0, critiques: 0 });

  const { outerIterationId, settings, campaignVersionId } = claim;
  try {
    // A trainer that cannot start on the training worker ends the attempt here, before any critique or dataset row.
    const trainer = await checkTrainer({ campaignVersionId });
    if (!trainer.ok) throw ApplicationFailure.nonRetryable(trainer.reason, 'TrainerCannotStart');
    const task = await orch.prepareTask({ campaignVersionId });
    iteration = claim.iteration;
    upsertSearchAttributes([{ key: Iteration, value: iteration }]);
    const incumbent = claim.incumbentCheckpointId;

    phase = 'critiquing';
    const feedback = await orch.critiqueIterationFeedback({
      campaignId: input.campaignId,
      campaignVersionId,
      outerIterationId,
      sample: settings.feedbackSample,
      seed: iteration,
    });
    let evalCritiques = 0;
    if (incumbent && settings.evalFailureSample > 0) {
      await ev.scoreCheckpoint({ checkpointId: incumbent, suiteId: task.suiteId, split: 'public', purpose: 'critique' });
      const r = await ev.critiqueEvalFailures({
        campaignId: input.campaignId,
        campaignVersionId,
        outerIterationId,
        checkpointId: incumbent,
        suiteId: task.suiteId,
        sample: settings.evalFailureSample,
        seed: iteration,
      });
      evalCritiques = r.critiqued;
    }

    phase = 'building-dataset';
    const dataset = await orch.buildIterationDataset({
      campaignId: input.campaignId,
      campaignVersionId,
      outerIterationId,
      iteration,
      baseVersionId: task.datasetVersionId,
      incumbentCheckpointId: incumbent,
      suiteId: task.suiteId,
    });
    const summary: OuterIterationSummary = {
      outerIterationId,
      iteration,
      status: 'no-candidate',
      reason: '',
      newFeedback: claim.newFeedback,
      critiques: feedback.counts.withExample + feedback.counts.noSignal + evalCritiques,
      datasetVersionId: dataset.versionId,
      datasetExamples: dataset.counts.examples,
    };

    phase = 'inner-loop';
    innerLoopId = outerInnerLoopIdOf(outerIterationId);
    summary.innerLoopId = innerLoopId;
    let inner: InnerLoopResult;
    try {
      inner = await executeChild(innerLoop, {
        workflowId: innerLoopId,
        taskQueue: queueOf('orchestration'),
        args: [
          {
            campaignVersionId,
            datasetVersionId: dataset.versionId,
            budget: { ...settings.innerBudget, ...input.innerBudget },
            iteration,
            baseCheckpointId: settings.warmStart && incumbent ? incumbent : undefined,
          },
        ],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      });
    } catch (e) {
      // A dead owner's inner loop that still runs: it is that iteration's; this workflow must not run a second.
      if (e instanceof Error && e.name === 'WorkflowExecutionAlreadyStartedError') {
        return finish({ ...summary, status: 'skipped', reason: `the inner loop ${innerLoopId} is already running` });
      }
      throw e;
    }

    const finishRecorded = async (
      s: OuterIterationSummary,
      extra: { promote?: boolean; approval?: Parameters<OrchestrationActivities['finishOuterIteration']>[0]['approval'] } = {},
    ) => {
      phase = 'recording';
      const r = await orch.finishOuterIteration({
        campaignId: input.campaignId,
        outerIterationId,
        summary: s,
        promote: extra.promote ? { candidateCheckpointId: s.candidateCheckpointId!, incumbentCheckpointId: incumbent } : undefined,
        approval: extra.approval,
      });
      return finish({ ...s, productionCheckpointId: r.productionCheckpointId ?? undefined });
    };
    if (!inner.best)
      return next(
        await finishRecorded({ ...summary, reason: `the inner loop produced no scored candidate (stopped by ${inner.stoppedBy})` }),
      );

    phase = 'gating';
    const candidate = inner.best.checkpointId;
    const against = incumbent ?? inner.baselineCheckpointId;
    if (!against)
      throw ApplicationFailure.nonRetryable(
        `iteration ${iteration} has no incumbent to compare with: no production model and no baseline checkpoint`,
        'NoIncumbentError',
      );
    const metric = settings.gate.metric;
    // The gate's noise across seeds: k reruns of the incumbent's recipe on this dataset version, scored on held-out.
    const seedRerunCheckpointIds = patched(SEED_NOISE_PATCH)
      ? await measureSeedNoise({
          datasetVersionId: dataset.versionId,
          incumbentCheckpointId: against,
          candidateCheckpointId: candidate,
          baseCheckpointId: settings.warmStart && incumbent ? incumbent : undefined,
          suiteId: task.suiteId,
        })
      : undefined;
    const cand = await ev.scoreCheckpoint({ checkpointId: candidate, suiteId: task.suiteId, split: 'heldout', purpose: 'gate' });
    const inc = await ev.scoreCheckpoint({ checkpointId: against, suiteId: task.suiteId, split: 'heldout', purpose: 'gate' });
    // The hacking guard compares public with held-out and public items with their twins, for both checkpoints.
    for (const checkpointId of [candidate, against]) {
      await ev.scoreCheckpoint({ checkpointId, suiteId: task.suiteId, split: 'public', purpose: 'gate' });
      await ev.scoreCheckpoint({ checkpointId, suiteId: task.suiteId, split: 'probe', purpose: 'gate' });
    }
    const decisionId = `${outerIterationId}/gate`;
    const gate = await orch.evaluateGate({
      decisionId,
      campaignId: input.campaignId,
      candidateCheckpointId: candidate,
      incumbentCheckpointId: against,
      suiteId: task.suiteId,
      settings: settings.gate,
      ...(seedRerunCheckpointIds ? { seedRerunCheckpointIds } : {}),
    });
    Object.assign(summary, {
      candidateCheckpointId: candidate,
      innerBest: { experimentId: inner.best.experimentId, publicScore: inner.best.publicScore },
      decisionId,
      reason: gate.reason,
      heldout: { metric, candidate: cand.metrics[metric], incumbent: inc.metrics[metric] },
    });

    let promote = gate.promote;
    let approval: Parameters<OrchestrationActivities['finishOuterIteration']>[0]['approval'];
    // A candidate the gate holds (`promotion.heldoutOutrun: hold`) goes to a researcher with the gate's evidence, like a
    // passed one under requireApproval; nobody answering rejects it.
    const held = !promote && gate.hold === true;
    if ((promote && settings.approval.requireApproval) || held) {
      const { timeoutSeconds } = settings.approval;
      const onTimeout = held ? 'reject' : settings.approval.onTimeout;
      pending = await orch.promotionEvidence({
        outerIterationId,
        decisionId,
        innerLoopId,
        candidateCheckpointId: candidate,
        incumbentCheckpointId: against,
        suiteId: task.suiteId,
        deadline: new Date(Date.now() + timeoutSeconds * 1000).toISOString(),
        defaultDecision: onTimeout,
      });
      phase = 'awaiting-approval';
      setCurrentDetails(promotionDetails(input.campaignId, pending));
      const answered = await condition(() => answer !== undefined, `${timeoutSeconds} seconds`);
      approval = answered
        ? { ...answer!, timedOut: false, candidateCheckpointId: candidate, experimentId: inner.best.experimentId }
        : {
            approve: onTimeout === 'promote',
            by: 'timeout',
            timedOut: true,
            candidateCheckpointId: candidate,
            experimentId: inner.best.experimentId,
          };
      promote = approval.approve;
      pending = undefined;
      setCurrentDetails('');
      const answeredBy = approval.timedOut ? 'not approved before the deadline' : `${promote ? 'approved' : 'rejected'} by ${approval.by}`;
      if (held) summary.reason = `${gate.reason}; the promotion was ${answeredBy}`;
      else if (!promote) summary.reason = `the gate passed, but the promotion was ${answeredBy}`;
    }
    summary.status = promote ? 'promoted' : 'rejected';
    summary.heldout!.production = promote ? cand.metrics[metric] : incumbent ? inc.metrics[metric] : undefined;
    return next(await finishRecorded(summary, { promote, approval }));
  } catch (e) {
    if (e instanceof ContinueAsNew) throw e;
    // The attempt's row ends with the reason, even when the workflow is being cancelled; then the workflow fails.
    await CancellationScope.nonCancellable(() => orch.failOuterIteration({ outerIterationId, reason: failureReason(e), innerLoopId }));
    throw e;
  }

  /**
   * Runs the seed reruns that an earlier gate on the same dataset version and recipe did not (planSeedReruns), each as
   * an `experiment` child with no public score, and scores every succeeded one on held-out; their checkpoints.
   */
  async function measureSeedNoise(at: {
    datasetVersionId: string;
    incumbentCheckpointId: string;
    candidateCheckpointId: string;
    baseCheckpointId?: string;
    suiteId: string;
  }): Promise<string[] | undefined> {
    const noise = settings.gate.noise;
    if (!noise?.enabled || noise.seeds < 1) return undefined;
    phase = 'measuring-noise';
    const { suiteId, ...where } = at;
    const plan = await orch.planSeedReruns({ campaignId: input.campaignId, campaignVersionId, seeds: noise.seeds, ...where });
    const ran = await Promise.all(
      plan.toRun.map((experimentId) =>
        executeChild(experiment, {
          workflowId: experimentId,
          taskQueue: queueOf('orchestration'),
          args: [
            {
              experimentId,
              innerLoopId: plan.groupId,
              suiteId,
              maxTrainingAttempts: plan.maxTrainingAttempts,
              trainingTimeoutSeconds: plan.trainingTimeoutSeconds,
              pruning: { rule: 'none', warmupSteps: 0, minCompleted: 0, metric: settings.gate.metric },
              skipPublic: true,
            },
          ],
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        }).then(
          (r) => (r.status === 'succeeded' && r.checkpointId ? [r.checkpointId] : []),
          // A rerun that fails (or that another attempt is still running) is one seed fewer; the decision says how many.
          () => [],
        ),
      ),
    );
    const checkpointIds = [...plan.done, ...ran.flat()];
    const asReference = patched(SEED_REFERENCE_PATCH);
    for (const checkpointId of checkpointIds) {
      await ev.scoreCheckpoint({ checkpointId, suiteId, split: 'heldout', purpose: 'gate' });
      // On public too: against the reruns (trained on this version, blind to both splits), a candidate's held-out gain
      // that outruns its public one is a leak (heldoutOutrunsPublic's reference control, core/gate/integrity-checks.ts).
      if (asReference) await ev.scoreCheckpoint({ checkpointId, suiteId, split: 'public', purpose: 'gate' });
    }
    phase = 'gating';
    return checkpointIds;
  }

  /** Continue as new while more iterations are asked for; otherwise the result. */
  async function next(result: OuterLoopResult): Promise<OuterLoopResult> {
    const remaining = (input.iterations ?? 1) - 1;
    if (remaining < 1) return result;
    return continueAsNew<typeof outerLoop>({ ...input, iterations: remaining, carry: { done: done.slice(-OUTER_SUMMARY_CAP) } });
  }
}
