// A campaign's recipe as people read it: the kept commits newest first with the patch and the score that kept each
// (`flywheel recipe log`, the campaign page), and one experiment's patch with its parent commit and result
// (`flywheel lineage`, the experiment page). PostgreSQL only; the diffs are the stored ones, as proposed.
import { and, eq, inArray } from 'drizzle-orm';
import type { Db } from '../db/client';
import { experiments, recipePatches } from '../db/schema';
import { keptCommits } from './recipes/recipe-commits';
import { patchOfExperiment } from './recipes/recipe-patches';

export interface KeptRecipeCommit {
  commit: string;
  /** The commit its patch was written against; null for an imported one. */
  parent: string | null;
  keptAt: string;
  /** The public score that kept it (a mean over seeds with `trainer.recipe.confirmSeeds`). */
  score: number | null;
  experimentId: string | null;
  /** The patch that made it, when one did (an import has none). */
  patch: { id: string; proposer: string; summary: string; hypothesis: string } | null;
}

/** The kept commits, newest (the best) first. */
export async function recipeLog(db: Db, campaignId: string): Promise<KeptRecipeCommit[]> {
  const kept = await keptCommits(db, campaignId);
  const commits = kept.map((k) => k.commit);
  const patches = commits.length
    ? await db
        .select({
          id: recipePatches.id,
          commit: recipePatches.commit,
          proposer: recipePatches.proposer,
          summary: recipePatches.summary,
          hypothesis: recipePatches.hypothesis,
        })
        .from(recipePatches)
        .where(and(eq(recipePatches.campaignId, campaignId), inArray(recipePatches.commit, commits), eq(recipePatches.status, 'accepted')))
    : [];
  return kept.map((k) => {
    const p = patches.find((x) => x.commit === k.commit);
    return {
      commit: k.commit,
      parent: k.parent,
      keptAt: k.keptAt!.toISOString(),
      score: k.keptScore,
      experimentId: k.experimentId,
      patch: p ? { id: p.id, proposer: p.proposer, summary: p.summary, hypothesis: p.hypothesis } : null,
    };
  });
}

export interface ExperimentRecipe {
  /** The commit its trainer ran; null: the campaign version's pinned commit (a knob experiment). */
  commit: string | null;
  /** Its patch, with the commit it was written against (the parent), or null for a knob experiment. */
  patch: {
    id: string;
    parent: string;
    proposer: string;
    summary: string;
    hypothesis: string;
    status: string;
    reason: string | null;
    diff: string;
  } | null;
}

/** An experiment's recipe commit and patch; undefined when there is no such experiment. */
export async function experimentRecipe(db: Db, experimentId: string): Promise<ExperimentRecipe | undefined> {
  const [e] = await db.select({ commit: experiments.recipeCommit }).from(experiments).where(eq(experiments.id, experimentId));
  if (!e) return undefined;
  const p = await patchOfExperiment(db, experimentId);
  return {
    commit: e.commit ?? p?.commit ?? null,
    patch: p
      ? {
          id: p.id,
          parent: p.baseCommit,
          proposer: p.proposer,
          summary: p.summary,
          hypothesis: p.hypothesis,
          status: p.status,
          reason: p.reason,
          diff: p.diff,
        }
      : null,
  };
}
