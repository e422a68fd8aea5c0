// finishOuterIteration: the outer iteration's last write. A promotion moves the campaign's production checkpoint
// only if it is still the incumbent the iteration started from (compare-and-set), a researcher's answer to an
// approval request is a decision row of its own, and the iteration's row gets its status and summary. Every write
// is keyed by the iteration, so a retry changes nothing.
import { recordDecision } from '../../services/decisions';
import { finishIteration } from '../../services/outer-iterations';
import { productionCheckpointOf, promoteIfIncumbent } from '../../services/production-model';
import type { ActivityDeps } from '../deps';
import type { FinishIterationInput, FinishIterationResult } from '../../contracts/outer-activities';

export async function finishOuterIteration(deps: ActivityDeps, input: FinishIterationInput): Promise<FinishIterationResult> {
  const { db } = deps;
  return db.transaction(async (tx) => {
    if (input.approval) {
      const a = input.approval;
      await recordDecision(tx, {
        id: `${input.outerIterationId}/approval`,
        campaignId: input.campaignId,
        kind: a.approve ? 'promote' : 'reject',
        checkpointId: a.candidateCheckpointId,
        experimentId: a.experimentId ?? null,
        rule: a.timedOut ? 'approval-timeout' : 'researcher-approval',
        reason: a.timedOut
          ? `no answer before the deadline: the default (${a.approve ? 'promote' : 'reject'}) applies`
          : `${a.approve ? 'approved' : 'rejected'} by ${a.by}${a.note ? `: ${a.note}` : ''}`,
        figures: { by: a.by, note: a.note ?? null, timedOut: a.timedOut },
        accepted: a.approve,
      });
    }
    if (input.promote) {
      const { candidateCheckpointId, incumbentCheckpointId } = input.promote;
      await promoteIfIncumbent(tx, input.campaignId, candidateCheckpointId, incumbentCheckpointId);
    }
    const production = await productionCheckpointOf(tx, input.campaignId);
    await finishIteration(tx, input.outerIterationId, { ...input.summary, productionCheckpointId: production ?? undefined });
    return { productionCheckpointId: production ?? null };
  });
}
