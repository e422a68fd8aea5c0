// claimOuterIteration: the outer loop's first step. Under a per-campaign lock it either resumes the iteration this
// workflow already owns, takes over one whose owner is gone, skips (another live workflow is mid-iteration, or too
// little new feedback arrived), or opens the next iteration and claims every feedback event not yet ingested: its
// watermark. A schedule fire and a manual trigger for the same window therefore make one iteration, not two.
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import { campaigns, feedbackEvents, outerIterations } from '../../db/schema';
import { outerIterationIdOf } from '../../workflows/outer-loop-api';
import { outerSettings, type OuterSettings } from '../../core/loop-settings';
import { loadCampaignSpec } from '../campaign/load-campaign';
import type { ActivityDeps } from '../deps';

export interface ClaimIterationInput {
  campaignId: string;
  /** The outerLoop workflow id (stable across continue-as-new). */
  workflowId: string;
  trigger: string;
}

export type ClaimIterationResult =
  | {
      claimed: true;
      outerIterationId: string;
      iteration: number;
      /** The production checkpoint when the iteration began, or null before the first promotion. */
      incumbentCheckpointId: string | null;
      newFeedback: number;
      /** True when this workflow took over an iteration whose owner is no longer running. */
      takenOver: boolean;
      settings: OuterSettings;
    }
  | { claimed: false; reason: string };

/** The advisory-lock namespace of outer-iteration claims (the second key is the campaign id's hash). */
const CLAIM_LOCK = 0x4f_75_74_72; // "Outr"

export async function claimOuterIteration(deps: ActivityDeps, input: ClaimIterationInput): Promise<ClaimIterationResult> {
  const spec = await loadCampaignSpec(deps.db, input.campaignId);
  // Asked outside the transaction: a Temporal round trip must not hold the lock.
  const [open] = await deps.db
    .select({ workflowId: outerIterations.workflowId })
    .from(outerIterations)
    .where(and(eq(outerIterations.campaignId, input.campaignId), eq(outerIterations.status, 'running')));
  const ownerAlive = open && open.workflowId !== input.workflowId ? await isRunning(deps, open.workflowId) : false;

  return deps.db.transaction(async (tx) => {
    await tx.execute(sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK}, hashtext(${input.campaignId}))`);
    const [latest] = await tx.select().from(outerIterations).where(eq(outerIterations.campaignId, input.campaignId)).orderBy(desc(outerIterations.iteration)).limit(1);
    if (latest?.status === 'running') {
      if (latest.workflowId !== input.workflowId) {
        // Take over only from the very owner found dead above; an owner that claimed since is alive by definition.
        if (ownerAlive || open?.workflowId !== latest.workflowId) {
          return { claimed: false as const, reason: `iteration ${latest.iteration} of "${input.campaignId}" is in progress in workflow ${latest.workflowId}` };
        }
        await tx.update(outerIterations).set({ workflowId: input.workflowId }).where(eq(outerIterations.id, latest.id));
      }
      return { claimed: true as const, outerIterationId: latest.id, iteration: latest.iteration, incumbentCheckpointId: latest.incumbentCheckpointId, newFeedback: latest.newFeedback, takenOver: latest.workflowId !== input.workflowId, settings: outerSettings(spec) };
    }

    const [campaign] = await tx.select({ production: campaigns.productionCheckpointId }).from(campaigns).where(eq(campaigns.id, input.campaignId));
    const pending = and(eq(feedbackEvents.campaignId, input.campaignId), isNull(feedbackEvents.ingestedBy));
    const [{ n }] = await tx.select({ n: sql<number>`count(*)::int` }).from(feedbackEvents).where(pending);
    const min = spec.outerLoop.minNewFeedback;
    if (campaign?.production && n < min) {
      return { claimed: false as const, reason: `only ${n} new feedback event${n === 1 ? '' : 's'} since the last iteration (outerLoop.minNewFeedback is ${min})` };
    }
    const iteration = (latest?.iteration ?? 0) + 1;
    const id = outerIterationIdOf(input.campaignId, iteration);
    await tx.update(feedbackEvents).set({ ingestedBy: id }).where(pending);
    const [span] = await tx
      .select({ n: sql<number>`count(*)::int`, from: sql<string | null>`min(${feedbackEvents.receivedAt})`, to: sql<string | null>`max(${feedbackEvents.receivedAt})` })
      .from(feedbackEvents)
      .where(eq(feedbackEvents.ingestedBy, id));
    await tx.insert(outerIterations).values({
      id,
      campaignId: input.campaignId,
      iteration,
      workflowId: input.workflowId,
      trigger: input.trigger,
      status: 'running',
      incumbentCheckpointId: campaign?.production ?? null,
      newFeedback: span.n,
      feedbackFrom: span.from === null ? null : new Date(span.from),
      feedbackTo: span.to === null ? null : new Date(span.to),
    });
    return { claimed: true as const, outerIterationId: id, iteration, incumbentCheckpointId: campaign?.production ?? null, newFeedback: span.n, takenOver: false, settings: outerSettings(spec) };
  });
}

/** Unknown (no Temporal client injected) counts as alive: skipping is safe, running an iteration twice is not. */
async function isRunning(deps: ActivityDeps, workflowId: string): Promise<boolean> {
  return deps.isWorkflowRunning ? deps.isWorkflowRunning(workflowId) : true;
}
