// The analyst tool's answers (agents/analyst-tool.ts): four structured views of a loop, from what PostgreSQL holds
// of the experiments before this batch (all finished: a batch runs to its end before the next is proposed), their
// patches, and the loop's kept commits (keep-or-revert has already decided this batch's, the same way on a retry).
// None of it changes while the batch is proposed, so a retried activity that must ask the model again sends the
// answers its first attempt sent. What a view holds: public scores, knobs, hypotheses, patch summaries and hashes,
// statuses, commits and loss curves; never a held-out score (rows are read field by field: agentViewOf), an eval
// item or a gate input.
import type { AnalystAnswer, AnalystQuery } from '../../agents/analyst-tool';
import { improves } from '../../core/loop-settings';
import type { CampaignSpec } from '../../core/spec';
import { BASELINE_PROPOSER } from '../../contracts/experiment';
import type { Db } from '../../db/client';
import { keptCommits } from '../../services/recipes/recipe-commits';
import { loopPatches } from '../../services/recipes/loop-patches';
import type { RecipePatch } from '../../services/recipes/recipe-patches';
import { loopAnalyst } from './loop-analyst';
import { agentViewOf, lossCurves, type ExperimentRow } from './proposer-context';
import { CONFIRM_PROPOSER, ownedBy } from './recipe-round';

/** Loss-curve points the `experiment` view gives (the leaderboard gives 5). */
export const EXPERIMENT_CURVE_POINTS = 20;

export interface AnalystData {
  spec: CampaignSpec;
  /** The loop's experiments before this batch. */
  rows: ExperimentRow[];
  /** Their patches, by experiment id. */
  patches: ReadonlyMap<string, RecipePatch>;
  /** The loop's kept commits, oldest first. */
  kept: { commit: string; parent: string | null; experimentId: string | null; keptScore: number | null }[];
  /** An experiment's loss curve, `[step, loss]` points. */
  curve(experimentId: string): Promise<[number, number][]>;
}

/** The answers for a loop, read from the database once (the curves when asked). */
export async function analystAnswerOf(db: Db, spec: CampaignSpec, innerLoopId: string, rows: ExperimentRow[]): Promise<AnalystAnswer> {
  const ids = new Set(rows.map((r) => r.id));
  const patches = new Map(
    (await loopPatches(db, innerLoopId)).filter((p) => p.experimentId && ids.has(p.experimentId)).map((p) => [p.experimentId!, p]),
  );
  const kept = (await keptCommits(db, spec.name)).filter((k) => ownedBy(k.experimentId, innerLoopId)).reverse();
  const curve = async (id: string) => (await lossCurves(db, [id], EXPERIMENT_CURVE_POINTS)).get(id) ?? [];
  return analystAnswer({ spec, rows, patches, kept, curve });
}

/** Answers each query from `data` alone. */
export function analystAnswer(data: AnalystData): AnalystAnswer {
  const { spec, patches } = data;
  const own = data.rows.filter((r) => r.proposer !== BASELINE_PROPOSER).sort((a, b) => a.index - b.index);
  const summary = loopAnalyst(spec, own, patches);
  const keptSet = new Set(data.kept.map((k) => k.commit));
  const byId = new Map(own.map((r) => [r.id, r]));
  const byIndex = new Map(own.map((r) => [r.index, r]));
  const experiment = (r: ExperimentRow) => {
    const p = patches.get(r.id);
    return {
      ...agentViewOf(r),
      commit: r.recipeCommit,
      patch: p
        ? { summary: p.summary, hash: p.normalizedHash.slice(0, 12), kept: r.recipeCommit !== null && keptSet.has(r.recipeCommit) }
        : null,
    };
  };
  const views: Record<AnalystQuery['view'], (q: AnalystQuery) => Promise<unknown>> = {
    best: () =>
      Promise.resolve({
        view: 'best',
        best: summary.best ? experiment(byIndex.get(summary.best.index)!) : null,
        kept: data.kept.map((k) => ({
          commit: k.commit,
          parent: k.parent,
          score: k.keptScore,
          experiment: k.experimentId ? (byId.get(k.experimentId)?.index ?? null) : null,
          patch: k.experimentId ? (patches.get(k.experimentId)?.summary ?? null) : null,
        })),
      }),
    plateau: () => {
      const bests: { index: number; publicScore: number }[] = [];
      for (const r of own)
        if (r.publicScore !== null && improves(r.publicScore, bests.at(-1)?.publicScore, spec.selection.mode))
          bests.push({ index: r.index, publicScore: r.publicScore });
      return Promise.resolve({
        view: 'plateau',
        experiments: own.length,
        best: summary.best && { index: summary.best.index, publicScore: summary.best.publicScore },
        sinceBest: summary.sinceBest,
        plateau: summary.plateau,
        batchSize: spec.innerLoop.batchSize,
        minDelta: spec.innerLoop.plateau.minDelta,
        bests,
      });
    },
    by_change: () => {
      const knobOnly = own.filter((r) => !patches.has(r.id) && r.proposer !== CONFIRM_PROPOSER);
      return Promise.resolve({
        view: 'by_change',
        knobs: { ...summary.knobs, failed: knobOnly.filter((r) => ['failed', 'pruned', 'timed_out'].includes(r.status)).length },
        patches: summary.patches.map((p) => {
          const commit = byIndex.get(p.index)!.recipeCommit;
          return {
            ...p,
            commit,
            hash: patches.get(byIndex.get(p.index)!.id)!.normalizedHash.slice(0, 12),
            kept: commit !== null && keptSet.has(commit),
          };
        }),
        confirmations: own
          .filter((r) => r.proposer === CONFIRM_PROPOSER)
          .map((r) => ({ index: r.index, commit: r.recipeCommit, status: r.status, publicScore: r.publicScore })),
      });
    },
    experiment: async (q) => {
      const r = q.experiment === null ? undefined : byIndex.get(q.experiment);
      if (!r)
        return {
          error:
            q.experiment === null
              ? "view 'experiment' needs `experiment`, an experiment's index"
              : `no experiment ${q.experiment} before this batch${own.length > 0 ? ` (indexes ${own[0].index} to ${own.at(-1)!.index})` : ''}`,
        };
      return { view: 'experiment', experiment: { ...experiment(r), lossCurve: await data.curve(r.id) } };
    },
  };
  return (q) => views[q.view](q);
}
