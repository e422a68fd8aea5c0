// After the gate: whether the candidate is promoted. A passed gate promotes it, unless the spec asks a researcher
// first (`promotion.requireApproval`); a candidate the gate holds (`promotion.heldoutOutrun: hold`) goes to a
// researcher with the gate's evidence as well, and nobody answering before the deadline rejects it.
import { condition, setCurrentDetails } from '@temporalio/workflow';
import type { OuterIterationSummary } from '../contracts/outer-loop';
import type { Gated } from './outer-loop-gate';
import type { OuterIteration, OuterLoopRuntime } from './outer-loop-runtime';
import type { Approval } from './outer-loop-steps';
import { promotionDetails } from './promotion-details';

/** The decision, with a researcher's answer where one is asked for; the summary's status, reason and production. */
export async function decidePromotion(
  loop: OuterLoopRuntime,
  it: OuterIteration,
  summary: OuterIterationSummary,
  gated: Gated,
  experimentId: string,
): Promise<{ promote: boolean; approval: Approval }> {
  const { gate, cand, inc } = gated;
  let promote = gate.promote;
  let approval: Approval;
  const held = !promote && gate.hold === true;
  if ((promote && it.settings.approval.requireApproval) || held) {
    approval = await askResearcher(loop, it, gated, experimentId, held ? 'reject' : it.settings.approval.onTimeout);
    promote = approval.approve;
    const answeredBy = approval.timedOut ? 'not approved before the deadline' : `${promote ? 'approved' : 'rejected'} by ${approval.by}`;
    if (held) summary.reason = `${gate.reason}; the promotion was ${answeredBy}`;
    else if (!promote) summary.reason = `the gate passed, but the promotion was ${answeredBy}`;
  }
  const { metric } = it.settings.gate;
  summary.status = promote ? 'promoted' : 'rejected';
  summary.heldout!.production = promote ? cand.metrics[metric] : it.incumbent ? inc.metrics[metric] : undefined;
  return { promote, approval };
}

/** Shows the evidence (the status query, the Temporal UI's details) and waits for an answer or the deadline. */
async function askResearcher(
  loop: OuterLoopRuntime,
  it: OuterIteration,
  gated: Gated,
  experimentId: string,
  onTimeout: 'promote' | 'reject',
): Promise<NonNullable<Approval>> {
  const { timeoutSeconds } = it.settings.approval;
  const { candidate, against, decisionId } = gated;
  loop.pending = await loop.orch.promotionEvidence({
    outerIterationId: it.outerIterationId,
    decisionId,
    innerLoopId: loop.innerLoopId!,
    candidateCheckpointId: candidate,
    incumbentCheckpointId: against,
    suiteId: it.task.suiteId,
    deadline: new Date(Date.now() + timeoutSeconds * 1000).toISOString(),
    defaultDecision: onTimeout,
  });
  loop.phase = 'awaiting-approval';
  setCurrentDetails(promotionDetails(loop.input.campaignId, loop.pending));
  const answered = await condition(() => loop.answer !== undefined, `${timeoutSeconds} seconds`);
  const approval = answered
    ? { ...loop.answer!, timedOut: false, candidateCheckpointId: candidate, experimentId }
    : { approve: onTimeout === 'promote', by: 'timeout', timedOut: true, candidateCheckpointId: candidate, experimentId };
  loop.pending = undefined;
  setCurrentDetails('');
  return approval;
}
