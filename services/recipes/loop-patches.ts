// One inner loop's recipe patches, every column, oldest first: what keep-or-revert reads (each patch experiment's
// commit and the commit it was written against) and what the proposer's tried list shows. Rows are the loop's by
// their inner_loop_id; a researcher's queued patch is one too.
import { and, asc, eq, isNull } from 'drizzle-orm';
import { recipePatches } from '../../db/schema';
import type { Queryable } from '../queryable';
import type { RecipePatch } from './recipe-patches';

export async function loopPatches(q: Queryable, innerLoopId: string): Promise<RecipePatch[]> {
  return q
    .select()
    .from(recipePatches)
    .where(eq(recipePatches.innerLoopId, innerLoopId))
    .orderBy(asc(recipePatches.createdAt), asc(recipePatches.id));
}

/** Researcher patches queued for the loop (status `queued`, no experiment yet), oldest first. */
export async function queuedPatches(q: Queryable, innerLoopId: string): Promise<RecipePatch[]> {
  return q
    .select()
    .from(recipePatches)
    .where(and(eq(recipePatches.innerLoopId, innerLoopId), eq(recipePatches.status, 'queued'), isNull(recipePatches.experimentId)))
    .orderBy(asc(recipePatches.createdAt), asc(recipePatches.id));
}

/** A queued patch given its experiment and commit (accepted) or its reason (rejected) when a batch takes it. */
export async function settleQueuedPatch(
  q: Queryable,
  id: string,
  outcome: { experimentId: string; commit: string; summary: string; normalizedHash: string; baseCommit: string } | { reason: string },
): Promise<void> {
  const set = 'reason' in outcome ? { status: 'rejected', reason: outcome.reason } : { status: 'accepted', ...outcome };
  await q
    .update(recipePatches)
    .set(set)
    .where(and(eq(recipePatches.id, id), eq(recipePatches.status, 'queued')));
}
