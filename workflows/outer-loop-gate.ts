// The outer loop's promotion gate: the inner loop's winner against the incumbent (or the baseline) on held-out, with
// the gate's noise across seeds and the hacking guard's public and probe scores; then, where the spec asks or the gate
// holds, a researcher's approval.
import { ApplicationFailure, executeChild, ParentClosePolicy, patched } from '@temporalio/workflow';
import type { GateSummary, SeedRerunPlan } from '../contracts/outer-activities';
import type { InnerLoopResult } from '../contracts/inner-loop';
import type { OuterIterationSummary } from '../contracts/outer-loop';
import type { ScoreResult } from '../contracts/eval';
import { experiment } from './experiment';
import type { OuterIteration, OuterLoopRuntime } from './outer-loop-runtime';
import { queueOf } from './queues';

/** The seed reruns before the gate (promotion.noise): executions started before it gate without them. */
export const SEED_NOISE_PATCH = 'gate-seed-noise';
/** The seed reruns scored on public as well: the reference model of the gate's held-out leak check. */
export const SEED_REFERENCE_PATCH = 'gate-seed-reference';
/** A pinned category anchor (promotion.anchor) scored on held-out before the gate, so its bound has scores to use. */
export const CATEGORY_ANCHOR_PATCH = 'gate-category-anchor';

/** What the gate decided, and on which checkpoints' held-out scores. */
export interface Gated {
  gate: GateSummary;
  candidate: string;
  against: string;
  decisionId: string;
  cand: ScoreResult;
  inc: ScoreResult;
}

/** Gates the inner loop's winner; the summary gains the candidate, the decision and the held-out scores. */
export async function gateCandidate(
  loop: OuterLoopRuntime,
  it: OuterIteration,
  summary: OuterIterationSummary,
  inner: InnerLoopResult & { best: NonNullable<InnerLoopResult['best']> },
): Promise<Gated> {
  const { settings, task } = it;
  loop.phase = 'gating';
  const candidate = inner.best.checkpointId;
  const against = comparedWith(it, inner);
  const metric = settings.gate.metric;
  // The gate's noise across seeds: k reruns of the incumbent's recipe on this dataset version, scored on held-out.
  const seedRerunCheckpointIds = patched(SEED_NOISE_PATCH)
    ? await measureSeedNoise(loop, it, {
        datasetVersionId: summary.datasetVersionId!,
        incumbentCheckpointId: against,
        candidateCheckpointId: candidate,
        baseCheckpointId: settings.warmStart && it.incumbent ? it.incumbent : undefined,
        suiteId: task.suiteId,
      })
    : undefined;
  const { cand, inc } = await scoreBoth(loop, task.suiteId, candidate, against);
  // Asked only when an anchor is pinned, so that loops without one record no marker. The first promotion, the default
  // anchor, was scored on held-out at its own gate; on a suite it never saw the gate says it fell back to the incumbent.
  const anchor = settings.gate.anchor;
  if (anchor && anchor !== candidate && anchor !== against && patched(CATEGORY_ANCHOR_PATCH))
    await loop.ev.scoreCheckpoint({ checkpointId: anchor, suiteId: task.suiteId, split: 'heldout', purpose: 'gate' });
  const decisionId = `${it.outerIterationId}/gate`;
  const gate = await loop.orch.evaluateGate({
    decisionId,
    campaignId: loop.input.campaignId,
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
  return { gate, candidate, against, decisionId, cand, inc };
}

/** The production model, else (before the first promotion) the inner loop's untrained baseline. */
function comparedWith(it: OuterIteration, inner: InnerLoopResult): string {
  const against = it.incumbent ?? inner.baselineCheckpointId;
  if (!against)
    throw ApplicationFailure.nonRetryable(
      `iteration ${it.iteration} has no incumbent to compare with: no production model and no baseline checkpoint`,
      'NoIncumbentError',
    );
  return against;
}

/** Both checkpoints on held-out; then, for the hacking guard, on public and probe (it compares them, and twins). */
async function scoreBoth(loop: OuterLoopRuntime, suiteId: string, candidate: string, against: string) {
  const cand = await loop.ev.scoreCheckpoint({ checkpointId: candidate, suiteId, split: 'heldout', purpose: 'gate' });
  const inc = await loop.ev.scoreCheckpoint({ checkpointId: against, suiteId, split: 'heldout', purpose: 'gate' });
  for (const checkpointId of [candidate, against]) {
    await loop.ev.scoreCheckpoint({ checkpointId, suiteId, split: 'public', purpose: 'gate' });
    await loop.ev.scoreCheckpoint({ checkpointId, suiteId, split: 'probe', purpose: 'gate' });
  }
  return { cand, inc };
}

/**
 * Runs the seed reruns that an earlier gate on the same dataset version and recipe did not (planSeedReruns), each as
 * an `experiment` child with no public score, and scores every succeeded one on held-out; their checkpoints.
 */
async function measureSeedNoise(
  loop: OuterLoopRuntime,
  it: OuterIteration,
  at: {
    datasetVersionId: string;
    incumbentCheckpointId: string;
    candidateCheckpointId: string;
    baseCheckpointId?: string;
    suiteId: string;
  },
): Promise<string[] | undefined> {
  const noise = it.settings.gate.noise;
  if (!noise?.enabled || noise.seeds < 1) return undefined;
  loop.phase = 'measuring-noise';
  const { suiteId, ...where } = at;
  const plan = await loop.orch.planSeedReruns({
    campaignId: loop.input.campaignId,
    campaignVersionId: it.campaignVersionId,
    seeds: noise.seeds,
    ...where,
  });
  const ran = await runSeedReruns(it, plan, suiteId);
  const checkpointIds = [...plan.done, ...ran.flat()];
  const asReference = patched(SEED_REFERENCE_PATCH);
  for (const checkpointId of checkpointIds) {
    await loop.ev.scoreCheckpoint({ checkpointId, suiteId, split: 'heldout', purpose: 'gate' });
    // On public too: against the reruns (trained on this version, blind to both splits), a candidate's held-out gain
    // that outruns its public one is a leak (heldoutOutrunsPublic's reference control, core/gate/integrity-checks.ts).
    if (asReference) await loop.ev.scoreCheckpoint({ checkpointId, suiteId, split: 'public', purpose: 'gate' });
  }
  loop.phase = 'gating';
  return checkpointIds;
}

/** Each rerun the plan asks for as an `experiment` child at once; each one's checkpoint, none for one that failed. */
function runSeedReruns(it: OuterIteration, plan: SeedRerunPlan, suiteId: string): Promise<string[][]> {
  return Promise.all(
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
            pruning: { rule: 'none', warmupSteps: 0, minCompleted: 0, metric: it.settings.gate.metric },
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
}
