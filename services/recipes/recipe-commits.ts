// A campaign's recipe history: the commits Flywheel imported or made from patches, and which of them became the best
// recipe (kept), with the public score that kept them: `git log` with scores, newest kept first.
import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import { recipeCommits } from '../../db/schema';
import type { Queryable } from '../queryable';

export type RecipeCommit = typeof recipeCommits.$inferSelect;

export interface NewRecipeCommit {
  campaignId: string;
  commit: string;
  parent: string | null;
  origin: 'import' | 'patch';
  experimentId?: string | null;
}

/** Records a commit of the campaign's repository; one recorded before is left as it is. */
export async function recordCommit(q: Queryable, c: NewRecipeCommit): Promise<void> {
  await q
    .insert(recipeCommits)
    .values({ campaignId: c.campaignId, commit: c.commit, parent: c.parent, origin: c.origin, experimentId: c.experimentId ?? null })
    .onConflictDoNothing();
}

export interface KeepCommit {
  campaignId: string;
  commit: string;
  parent: string | null;
  experimentId: string | null;
  score: number | null;
}

/**
 * Marks `commit` kept: the campaign's new best recipe. Idempotent: a commit kept before keeps its first kept_at and
 * score (a retried activity changes nothing).
 */
export async function keepCommit(q: Queryable, k: KeepCommit): Promise<void> {
  await q
    .insert(recipeCommits)
    .values({
      campaignId: k.campaignId,
      commit: k.commit,
      parent: k.parent,
      origin: k.parent ? 'patch' : 'import',
      experimentId: k.experimentId,
      keptAt: new Date(),
      keptScore: k.score,
    })
    .onConflictDoUpdate({
      target: [recipeCommits.campaignId, recipeCommits.commit],
      set: {
        keptAt: sql`coalesce(${recipeCommits.keptAt}, excluded.kept_at)`,
        keptScore: sql`case when ${recipeCommits.keptAt} is null then excluded.kept_score else ${recipeCommits.keptScore} end`,
        experimentId: sql`coalesce(${recipeCommits.experimentId}, excluded.experiment_id)`,
      },
    });
}

/** The kept commits, newest first (the first is the campaign's best recipe). */
export async function keptCommits(q: Queryable, campaignId: string): Promise<RecipeCommit[]> {
  return q
    .select()
    .from(recipeCommits)
    .where(and(eq(recipeCommits.campaignId, campaignId), isNotNull(recipeCommits.keptAt)))
    .orderBy(desc(recipeCommits.keptAt), desc(recipeCommits.createdAt));
}

/** Every recorded commit of the campaign, newest first. */
export async function recipeCommitsOf(q: Queryable, campaignId: string): Promise<RecipeCommit[]> {
  return q.select().from(recipeCommits).where(eq(recipeCommits.campaignId, campaignId)).orderBy(desc(recipeCommits.createdAt));
}
