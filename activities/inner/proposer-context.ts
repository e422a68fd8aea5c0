// What the proposer agent sees, read from PostgreSQL: the goal, the search space, the public leaderboard with a
// few points of each run's loss curve (and, with a recipe, each experiment's patch summary and commit), the analyst's
// notes and, with a recipe, its mutable files at the best commit and the patches tried. Held-out scores, eval items
// and the gate's inputs are never read here, so they cannot reach an agent. Also the loop's past batches, for the
// hybrid proposer's hand-over rule.
import type { ProposerContext, RecipeView } from '../../agents/proposer';
import { improves } from '../../core/loop-settings';
import type { PastBatch } from '../../core/sampler/hybrid-mode';
import type { CampaignSpec } from '../../core/spec';
import { BASELINE_PROPOSER } from '../../contracts/experiment';
import type { Db } from '../../db/client';
import { lastRunIds, loopBatches, loopExperiments, lossPoints, recentAnalysisTexts, type ExperimentRow } from '../../services/inner-loops';
import { loopPatches } from '../../services/recipes/loop-patches';
import { loopAnalyst } from './loop-analyst';

export type { ExperimentRow };

/** Experiments the leaderboard shows the agent (the most recent), and loss points per curve. */
const LEADERBOARD_ROWS = 40;
const CURVE_POINTS = 5;
const ANALYSES = 5;

/** An experiment as the agents see it: the proposer's leaderboard and the analyst's batch and board. */
export const agentViewOf = (r: ExperimentRow) => ({
  index: r.index,
  params: r.params,
  status: r.status,
  publicScore: r.publicScore,
  hypothesis: r.hypothesis,
  proposer: r.proposer,
});

export async function proposerContext(
  db: Db,
  spec: CampaignSpec,
  innerLoopId: string,
  rows: ExperimentRow[],
  count: number,
  recipe?: RecipeView,
): Promise<ProposerContext> {
  const shown = rows.filter((r) => r.proposer !== BASELINE_PROPOSER).slice(-LEADERBOARD_ROWS);
  const curves = await lossCurves(
    db,
    shown.map((r) => r.id),
  );
  const notes = await recentAnalysisTexts(db, innerLoopId, ANALYSES);
  const patches = recipe
    ? new Map((await loopPatches(db, innerLoopId)).filter((p) => p.experimentId).map((p) => [p.experimentId!, p]))
    : undefined;
  const patchOf = (r: ExperimentRow) => {
    if (!patches) return {};
    const p = patches.get(r.id);
    return { commit: r.recipeCommit, patch: p ? { summary: p.summary, hash: p.normalizedHash.slice(0, 12) } : null };
  };
  return {
    goal: spec.goal,
    metric: spec.selection.metric,
    mode: spec.selection.mode,
    searchSpace: spec.searchSpace,
    leaderboard: shown.map((r) => ({
      ...agentViewOf(r),
      ...patchOf(r),
      lossCurve: curves.get(r.id) ?? [],
    })),
    analyses: notes,
    count,
    ...(recipe ? { recipe, analyst: loopAnalyst(spec, rows, patches ?? new Map()) } : {}),
  };
}

/** Up to `points` evenly spaced `[step, loss]` points of each experiment's last training run. */
export async function lossCurves(db: Db, experimentIds: string[], points = CURVE_POINTS): Promise<Map<string, [number, number][]>> {
  const out = new Map<string, [number, number][]>();
  if (experimentIds.length === 0) return out;
  const last = await lastRunIds(db, experimentIds);
  if (last.size === 0) return out;
  const byRun = await lossPoints(db, [...last.values()]);
  for (const [experimentId, runId] of last) {
    const all = (byRun.get(runId) ?? []).map((p): [number, number] => [p.step, Number(p.value.toFixed(4))]);
    const pick =
      all.length <= points ? all : Array.from({ length: points }, (_, i) => all[Math.round((i * (all.length - 1)) / (points - 1))]);
    out.set(experimentId, pick);
  }
  return out;
}

/** The loop's recorded batches in order, each with whether an agent proposal in it set a new best. */
export async function pastBatches(db: Db, innerLoopId: string, spec: CampaignSpec): Promise<PastBatch[]> {
  const batches = await loopBatches(db, innerLoopId);
  const rows = (await loopExperiments(db, innerLoopId)).filter((r) => r.proposer !== BASELINE_PROPOSER);
  const { mode } = spec.selection;
  return batches.map((b, k) => {
    const end = batches[k + 1]?.startIndex ?? Infinity;
    let best: number | undefined;
    for (const r of rows) if (r.index < b.startIndex && r.publicScore !== null && improves(r.publicScore, best, mode)) best = r.publicScore;
    const agentImproved = rows.some(
      (r) =>
        r.index >= b.startIndex &&
        r.index < end &&
        r.proposer === 'agent' &&
        r.publicScore !== null &&
        improves(r.publicScore, best, mode, best === undefined ? 0 : spec.innerLoop.plateau.minDelta),
    );
    return { mode: b.mode as PastBatch['mode'], agentImproved };
  });
}
