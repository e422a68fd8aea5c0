// Keep or revert, at the start of each batch of a campaign with a recipe (trainer.recipe), from PostgreSQL alone so
// a retried proposeExperiments decides the same: every patch experiment of the loop that has finished is kept (a
// recipe commit whose parent is the commit it was written against: keepCommit) when its public score beats the best
// kept experiment's by the selection rule, or, with `trainer.recipe.confirmSeeds: n`, once n reruns of its commit with
// other seeds (experiments of their own, whose run seeds differ by index) leave its mean score still beating it.
// Otherwise it is reverted: its commit stays in the repository and the tried list, never the base. The batch is then
// proposed against the best kept experiment's commit and knobs.
import { improves } from '../../core/loop-settings';
import type { CampaignSpec, Params, RecipeSpec } from '../../core/spec';
import { BASELINE_PROPOSER } from '../../contracts/experiment';
import type { Queryable } from '../../services/queryable';
import type { ExperimentRow } from '../../services/inner-loops';
import { keepCommit, keptCommits } from '../../services/recipes/recipe-commits';
import { loopPatches } from '../../services/recipes/loop-patches';
import type { RecipePatch } from '../../services/recipes/recipe-patches';
import type { BatchEntry } from './agent-batch';

/** The proposer name of a confirmation rerun: a patch experiment's commit and knobs again, with another seed. */
export const CONFIRM_PROPOSER = 'recipe-confirm';

/** What the next batch is proposed against: the best kept experiment's commit and knobs (the import before any). */
export interface RecipeBase {
  commit: string;
  params?: Params;
  experimentId?: string;
  score?: number;
}

export interface RecipeRound {
  base: RecipeBase;
  /** Confirmation reruns this batch starts first (already capped at the batch's size). */
  confirmations: BatchEntry[];
  /** One line per decision, for the batch's note. */
  notes: string[];
  /** The loop's patches recorded so far (accepted, rejected, queued), oldest first. */
  tried: RecipePatch[];
}

export type PinnedRecipe = RecipeSpec & { commit: string };

/** The recipe block of a registered version (its commit pinned), or undefined for a campaign without one. */
export function pinnedRecipe(spec: CampaignSpec): PinnedRecipe | undefined {
  const r = spec.trainer.recipe;
  return r?.commit ? { ...r, commit: r.commit } : undefined;
}

export async function recipeRound(
  q: Queryable,
  spec: CampaignSpec,
  recipe: PinnedRecipe,
  innerLoopId: string,
  rows: ExperimentRow[],
  count: number,
): Promise<RecipeRound> {
  const { mode } = spec.selection;
  const minDelta = spec.innerLoop.plateau.minDelta;
  const own = rows.filter((r) => r.proposer !== BASELINE_PROPOSER);
  const commitOf = (r: ExperimentRow) => r.recipeCommit ?? recipe.commit;
  const kept = new Set([
    recipe.commit,
    ...(await keptCommits(q, spec.name)).filter((k) => ownedBy(k.experimentId, innerLoopId)).map((k) => k.commit),
  ]);
  const tried = await loopPatches(q, innerLoopId);
  const byExperiment = new Map(tried.filter((p) => p.experimentId).map((p) => [p.experimentId!, p]));
  const bestKept = (): ExperimentRow | undefined => {
    let best: ExperimentRow | undefined;
    for (const r of own)
      if (kept.has(commitOf(r)) && r.publicScore !== null && improves(r.publicScore, best?.publicScore ?? undefined, mode)) best = r;
    return best;
  };

  const notes: string[] = [];
  const confirmations: BatchEntry[] = [];
  // Undecided patch experiments that finished with a score, best first, so of two winners against the same best only
  // the better one is kept.
  const sign = mode === 'min' ? 1 : -1;
  const candidates = own
    .filter((r) => byExperiment.has(r.id) && r.proposer !== CONFIRM_PROPOSER && !kept.has(commitOf(r)) && r.publicScore !== null)
    .sort((a, b) => sign * (a.publicScore! - b.publicScore!) || a.index - b.index);
  for (const r of candidates) {
    const patch = byExperiment.get(r.id)!;
    const best = bestKept();
    const label = `patch ${patch.summary || patch.normalizedHash.slice(0, 12)} (${r.id})`;
    if (!best) {
      notes.push(`${label} undecided: no experiment on the best commit has a public score to judge it against yet`);
      continue;
    }
    if (!improves(r.publicScore!, best.publicScore!, mode, minDelta)) {
      notes.push(`${label} reverted: ${r.publicScore} does not beat the best ${best.publicScore}`);
      continue;
    }
    let score = r.publicScore!;
    if (recipe.confirmSeeds > 0) {
      const reruns = own.filter((x) => x.proposer === CONFIRM_PROPOSER && commitOf(x) === commitOf(r));
      const missing = recipe.confirmSeeds - reruns.length;
      if (missing > 0) {
        const room = Math.max(0, Math.min(missing, count - confirmations.length));
        for (let i = 0; i < room; i++)
          confirmations.push({
            params: r.params,
            hypothesis: `confirmation rerun ${reruns.length + i + 1} of ${recipe.confirmSeeds} of ${label}, with another seed: kept only if its mean still beats the best`,
            proposer: CONFIRM_PROPOSER,
            commit: commitOf(r),
          });
        notes.push(
          `${label} beats the best (${r.publicScore} vs ${best.publicScore}): ${room} of ${missing} confirmation reruns in this batch`,
        );
        continue;
      }
      const scores = [r, ...reruns].map((x) => x.publicScore);
      score = scores.some((s) => s === null) ? NaN : scores.reduce((a, b) => a! + b!, 0)! / scores.length;
      if (Number.isNaN(score) || !improves(score, best.publicScore!, mode, minDelta)) {
        notes.push(
          `${label} reverted after ${reruns.length} confirmation reruns: mean ${Number.isNaN(score) ? 'undefined (a rerun failed)' : score} does not beat the best ${best.publicScore}`,
        );
        continue;
      }
    }
    await keepCommit(q, { campaignId: spec.name, commit: commitOf(r), parent: patch.baseCommit, experimentId: r.id, score });
    kept.add(commitOf(r));
    notes.push(
      `${label} kept as ${commitOf(r).slice(0, 12)} (score ${score}${recipe.confirmSeeds > 0 ? `, mean of ${recipe.confirmSeeds + 1} seeds` : ''})`,
    );
  }
  const best = bestKept();
  const base: RecipeBase = best
    ? { commit: commitOf(best), params: best.params, experimentId: best.id, score: best.publicScore ?? undefined }
    : { commit: recipe.commit };
  return { base, confirmations, notes, tried };
}

/** Whether a row of the loop's (by its experiment id, `${innerLoopId}/e…`). */
export const ownedBy = (experimentId: string | null, innerLoopId: string) => experimentId?.startsWith(`${innerLoopId}/`) === true;
