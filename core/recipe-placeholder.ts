// `{recipe}` in a trainer's command (docs/recipes.md): the folder of the recipe commit a run uses, filled in by the
// launch (activities/training/recipe-entry.ts) and, before registration, by the knob check (the folder as it is).

/** `{recipe}` in a trainer argv. */
export const RECIPE_PLACEHOLDER = '{recipe}';

/** The argv with `{recipe}` replaced by the recipe's folder (unchanged without one). */
export function withRecipe(argv: string[], recipeDir: string | undefined): string[] {
  return recipeDir === undefined ? argv : argv.map((a) => a.replaceAll(RECIPE_PLACEHOLDER, recipeDir));
}
