// A campaign's production model: which checkpoint it is, and the promotion that moves it (the checkpoint's row is
// services/checkpoints.ts's checkpointById).
import { and, eq, isNull, or } from 'drizzle-orm';
import { campaigns } from '../db/schema';
import type { Queryable } from './queryable';

/** The campaign's production checkpoint id: null before the first promotion, undefined for an unknown campaign. */
export async function productionCheckpointOf(q: Queryable, campaignId: string): Promise<string | null | undefined> {
  const [c] = await q.select({ production: campaigns.productionCheckpointId }).from(campaigns).where(eq(campaigns.id, campaignId));
  return c === undefined ? undefined : c.production;
}

/**
 * Makes `candidate` the campaign's production checkpoint if production is still `incumbent` (compare-and-set: a
 * promotion made meanwhile by another iteration wins), or is the candidate already (a retry).
 */
export async function promoteIfIncumbent(q: Queryable, campaignId: string, candidate: string, incumbent: string | null): Promise<void> {
  const stillIncumbent = incumbent === null ? isNull(campaigns.productionCheckpointId) : eq(campaigns.productionCheckpointId, incumbent);
  await q
    .update(campaigns)
    .set({ productionCheckpointId: candidate })
    .where(and(eq(campaigns.id, campaignId), or(stillIncumbent, eq(campaigns.productionCheckpointId, candidate))));
}
