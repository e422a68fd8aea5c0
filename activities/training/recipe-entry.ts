// A recipe campaign's trainer (`trainer.recipe`, docs/recipes.md): the commit a run uses is materialized read-only
// (services/recipes/materialize-recipe.ts, FLYWHEEL_HOME/recipes/<campaign>.trees/<commit>), `{recipe}` in the
// command's arguments names that folder, and the sandbox binds it read-only over FLYWHEEL_HOME's mask.
import type { IsolationRequest } from '../../backends/sandbox/sandbox';
import { RECIPE_PLACEHOLDER, withRecipe } from '../../core/recipe-placeholder';
import type { CampaignSpec } from '../../core/spec';
import { materializeRecipe } from '../../services/recipes/materialize-recipe';
import { recipeTreeOf } from '../../services/recipes/recipe-repo';

export { RECIPE_PLACEHOLDER, withRecipe };

/** The request with `{recipe}` filled in and the commit's folder bound read-only after the masks. */
export function withRecipeRequest(req: IsolationRequest, recipeDir: string | undefined): IsolationRequest {
  if (recipeDir === undefined) return req;
  return { ...req, argv: withRecipe(req.argv, recipeDir), unmasked: [...(req.unmasked ?? []), recipeDir] };
}

/**
 * The read-only folder of the recipe commit a run uses: `commit` (an experiment's own), else the campaign version's
 * pinned `trainer.recipe.commit`; undefined for a campaign without a recipe.
 */
export function recipeDirOf(
  spec: Pick<CampaignSpec, 'trainer'> & Partial<Pick<CampaignSpec, 'name'>>,
  home: string,
  commit?: string | null,
): string | undefined {
  const use = commit ?? spec.trainer.recipe?.commit;
  if (!spec.trainer.recipe || !use || spec.name === undefined) return undefined;
  return materializeRecipe(home, spec.name, use, recipeTreeOf(home, spec.name, use));
}
