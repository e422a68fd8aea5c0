// Recipe patches: every patch proposed for a campaign (an agent's or a researcher's), with what the checks made of
// it. Recorded once per id (a retried activity finds its row); the tried list is the duplicate check's memory and the
// proposer's "already tried".
import { asc, eq } from 'drizzle-orm';
import type { Params } from '../../core/spec';
import { recipePatches } from '../../db/schema';
import type { Queryable } from '../queryable';

export type RecipePatch = typeof recipePatches.$inferSelect;
export type PatchStatus = 'accepted' | 'rejected' | 'queued';

export interface NewRecipePatch {
  /** Deterministic, from the caller's ids (loop, batch, proposal index): the idempotency key. */
  id: string;
  campaignId: string;
  innerLoopId: string;
  experimentId?: string | null;
  baseCommit: string;
  commit?: string | null;
  diff: string;
  normalizedHash: string;
  summary?: string;
  /** `agent:<model>` | `researcher:<name>` */
  proposer: string;
  hypothesis?: string;
  /** A researcher's knob values for its experiment, over the best's (`flywheel propose --params`). */
  params?: Params | null;
  status: PatchStatus;
  reason?: string | null;
}

/** Records a patch; a row with the same id (or the same loop and experiment) is kept as it is. True when inserted. */
export async function recordPatch(q: Queryable, p: NewRecipePatch): Promise<boolean> {
  const inserted = await q
    .insert(recipePatches)
    .values({
      id: p.id,
      campaignId: p.campaignId,
      innerLoopId: p.innerLoopId,
      experimentId: p.experimentId ?? null,
      baseCommit: p.baseCommit,
      commit: p.commit ?? null,
      diff: p.diff,
      normalizedHash: p.normalizedHash,
      summary: p.summary ?? '',
      proposer: p.proposer,
      hypothesis: p.hypothesis ?? '',
      params: p.params ?? null,
      status: p.status,
      reason: p.reason ?? null,
    })
    .onConflictDoNothing()
    .returning({ id: recipePatches.id });
  return inserted.length > 0;
}

/** A queued or accepted patch given its experiment (and commit) once the loop runs it. */
export async function setPatchExperiment(q: Queryable, id: string, experimentId: string, status: PatchStatus = 'accepted'): Promise<void> {
  await q.update(recipePatches).set({ experimentId, status }).where(eq(recipePatches.id, id));
}

export interface TriedPatch {
  id: string;
  normalizedHash: string;
  diff: string;
  status: PatchStatus;
  reason: string | null;
  summary: string;
  experimentId: string | null;
}

/** Every patch recorded for the campaign, oldest first: what checkPatch's duplicate rules compare against. */
export async function triedPatches(q: Queryable, campaignId: string): Promise<TriedPatch[]> {
  const rows = await q
    .select({
      id: recipePatches.id,
      normalizedHash: recipePatches.normalizedHash,
      diff: recipePatches.diff,
      status: recipePatches.status,
      reason: recipePatches.reason,
      summary: recipePatches.summary,
      experimentId: recipePatches.experimentId,
    })
    .from(recipePatches)
    .where(eq(recipePatches.campaignId, campaignId))
    .orderBy(asc(recipePatches.createdAt), asc(recipePatches.id));
  return rows.map((r) => ({ ...r, status: r.status as PatchStatus }));
}

/** The patch an experiment runs, or undefined. */
export async function patchOfExperiment(q: Queryable, experimentId: string): Promise<RecipePatch | undefined> {
  const [row] = await q.select().from(recipePatches).where(eq(recipePatches.experimentId, experimentId));
  return row;
}
