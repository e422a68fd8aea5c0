// finishOuterIteration: the outer iteration's last write. A promotion moves the campaign's production checkpoint
// only if it is still the incumbent the iteration started from (compare-and-set), a researcher's answer to an
// approval request is a decision row of its own, and the iteration's row gets its status and summary. Every write
// is keyed by the iteration, so a retry changes nothing.
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import { campaigns, decisions, outerIterations } from '../../db/schema';
import type { ActivityDeps } from '../deps';
import type { FinishIterationInput, FinishIterationResult } from '../../contracts/outer-activities';

export async function finishOuterIteration(deps: ActivityDeps, input: FinishIterationInput): Promise<FinishIterationResult> {
  const { db } = deps;
  return db.transaction(async (tx) => {
    if (input.approval) {
      const a = input.approval;
      await tx
        .insert(decisions)
        .values({
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
        })
        .onConflictDoNothing();
    }
    if (input.promote) {
      const { candidateCheckpointId, incumbentCheckpointId } = input.promote;
      const stillIncumbent =
        incumbentCheckpointId === null
          ? isNull(campaigns.productionCheckpointId)
          : eq(campaigns.productionCheckpointId, incumbentCheckpointId);
      await tx
        .update(campaigns)
        .set({ productionCheckpointId: candidateCheckpointId })
        .where(and(eq(campaigns.id, input.campaignId), or(stillIncumbent, eq(campaigns.productionCheckpointId, candidateCheckpointId))));
    }
    const [campaign] = await tx
      .select({ production: campaigns.productionCheckpointId })
      .from(campaigns)
      .where(eq(campaigns.id, input.campaignId));
    const s = input.summary;
    await tx
      .update(outerIterations)
      .set({
        status: s.status,
        innerLoopId: s.innerLoopId ?? null,
        candidateCheckpointId: s.candidateCheckpointId ?? null,
        decisionId: s.decisionId ?? null,
        summary: { ...s, productionCheckpointId: campaign?.production ?? undefined },
        finishedAt: sql`coalesce(${outerIterations.finishedAt}, now())`,
      })
      .where(eq(outerIterations.id, input.outerIterationId));
    return { productionCheckpointId: campaign?.production ?? null };
  });
}
