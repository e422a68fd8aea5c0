// Pinning a campaign's recipe at registration: the folder `trainer.recipe.path` names is imported (import-recipe.ts)
// and its commit written into the spec (`trainer.recipe.commit`), so the campaign version's id changes when the folder
// does. A spec that already names a commit the repository holds keeps it; a spec without a recipe is returned as it is.
import path from 'node:path';
import { UsageError } from '../../core/errors';
import type { CampaignSpec } from '../../core/spec';
import { importRecipe } from './import-recipe';
import { hasCommit, recipeRepoOf } from './recipe-repo';

/** The spec with `trainer.recipe.commit` filled in; `cwd` resolves a relative recipe path. */
export async function pinRecipe(spec: CampaignSpec, home: string, where?: string, cwd = process.cwd()): Promise<CampaignSpec> {
  const recipe = spec.trainer.recipe;
  if (!recipe) return spec;
  if (recipe.commit && hasCommit(recipeRepoOf(home, spec.name), recipe.commit)) return spec;
  const commit = await importRecipe(home, spec.name, path.resolve(cwd, recipe.path)).catch((e: unknown) => {
    if (e instanceof UsageError && where) throw new UsageError(`${where}: ${e.message}`);
    throw e;
  });
  if (recipe.commit && recipe.commit !== commit)
    throw new UsageError(
      `${where ? `${where}: ` : ''}trainer.recipe.commit ${recipe.commit} is not in the recipe repository of "${spec.name}" (the folder imports as ${commit})`,
    );
  return { ...spec, trainer: { ...spec.trainer, recipe: { ...recipe, commit } } };
}
