// The recipe commit a person's patch is written against, and the one `flywheel recipe show` prints by default: the
// newest kept commit (keep-or-revert keeps a commit only when its experiment beats the best, so the newest kept is the
// best so far), of one inner loop or of the whole campaign, else the campaign version's pinned commit.
import { eq } from 'drizzle-orm';
import type { RecipeSpec, SearchSpace } from '../core/spec';
import type { Db } from '../db/client';
import { innerLoops } from '../db/schema';
import { latestCampaignVersionId, loadCampaignVersion } from './campaigns/campaign-versions';
import { keptCommits } from './recipes/recipe-commits';

export interface BestRecipe {
  campaignId: string;
  campaignVersionId: string;
  /** The version's recipe block, its commit pinned. */
  recipe: RecipeSpec & { commit: string };
  /** The best commit so far; `pinned` when no commit has been kept yet. */
  commit: string;
  keptBy?: { experimentId: string | null; score: number | null };
  /** The version's trainer runs unsandboxed (the patch's compile check follows it). */
  unsandboxed: boolean;
  /** The version's search space (a researcher's `--params` are checked against it). */
  searchSpace: SearchSpace;
}

/** The loop's best recipe commit, or a reason it has none (no such loop, no recipe). */
export async function loopBestRecipe(db: Db, innerLoopId: string): Promise<BestRecipe | { none: string }> {
  const [loop] = await db
    .select({ campaignId: innerLoops.campaignId, versionId: innerLoops.campaignVersionId })
    .from(innerLoops)
    .where(eq(innerLoops.id, innerLoopId));
  if (!loop?.versionId) return { none: `inner loop ${innerLoopId} has not recorded its campaign version yet` };
  return bestOf(db, loop.campaignId, loop.versionId, innerLoopId);
}

/** The campaign's best recipe commit over all its loops (its latest version's pinned one before any is kept). */
export async function campaignBestRecipe(db: Db, campaignId: string): Promise<BestRecipe | { none: string }> {
  const versionId = await latestCampaignVersionId(db, campaignId);
  if (!versionId) return { none: `unknown campaign "${campaignId}"` };
  return bestOf(db, campaignId, versionId);
}

async function bestOf(db: Db, campaignId: string, versionId: string, innerLoopId?: string): Promise<BestRecipe | { none: string }> {
  const { spec } = await loadCampaignVersion(db, versionId);
  const recipe = spec.trainer.recipe;
  if (!recipe?.commit) return { none: `campaign "${campaignId}" has no trainer.recipe: it has knobs only` };
  const kept = (await keptCommits(db, campaignId)).filter((k) => !innerLoopId || k.experimentId?.startsWith(`${innerLoopId}/`));
  const best = kept[0];
  return {
    campaignId,
    campaignVersionId: versionId,
    recipe: { ...recipe, commit: recipe.commit },
    commit: best?.commit ?? recipe.commit,
    keptBy: best ? { experimentId: best.experimentId, score: best.keptScore } : undefined,
    unsandboxed: spec.trainer.unsandboxed === true,
    searchSpace: spec.searchSpace,
  };
}
