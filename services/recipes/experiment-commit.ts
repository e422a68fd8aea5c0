// Which recipe commit an experiment's trainer runs: set when a patch experiment is proposed; null runs the campaign
// version's pinned `trainer.recipe.commit` (launch-training resolves it).
import { eq } from 'drizzle-orm';
import { experiments } from '../../db/schema';
import type { Queryable } from '../queryable';

export async function setExperimentCommit(q: Queryable, experimentId: string, commit: string): Promise<void> {
  await q.update(experiments).set({ recipeCommit: commit }).where(eq(experiments.id, experimentId));
}

/** The experiment's own recipe commit, or null (none set, or no such experiment). */
export async function experimentCommit(q: Queryable, experimentId: string): Promise<string | null> {
  const [row] = await q.select({ commit: experiments.recipeCommit }).from(experiments).where(eq(experiments.id, experimentId));
  return row?.commit ?? null;
}
