// The analyst's structured view of a loop, derived from the public numbers alone (pure): the best so far, how many
// experiments have run since it (a plateau), and what each kind of change did: knob-only experiments as a group, and
// each patch with its public score against the best before it. The proposer of a recipe campaign gets it in its
// context (`analyst`, a summary kept there for endpoints that take no tools) and, in more detail, from the analyst
// tool (analyst-views.ts); it reads experiment rows as the proposer's leaderboard does, never a held-out score.
import { improves } from '../../core/loop-settings';
import type { CampaignSpec } from '../../core/spec';
import { BASELINE_PROPOSER } from '../../contracts/experiment';
import type { ExperimentRow } from '../../services/inner-loops';
import type { RecipePatch } from '../../services/recipes/recipe-patches';
import { CONFIRM_PROPOSER } from './recipe-round';

export interface LoopAnalysis {
  best: { index: number; publicScore: number; patch: string | null } | null;
  /** Experiments run since the best one; `plateau` once a whole batch's worth passed without a new best. */
  sinceBest: number;
  plateau: boolean;
  knobs: { runs: number; scored: number; best: number | null };
  patches: { index: number; summary: string; status: string; publicScore: number | null; bestBefore: number | null; improved: boolean }[];
}

export function loopAnalyst(spec: CampaignSpec, rows: ExperimentRow[], patches: ReadonlyMap<string, RecipePatch>): LoopAnalysis {
  const { mode } = spec.selection;
  const own = rows.filter((r) => r.proposer !== BASELINE_PROPOSER).sort((a, b) => a.index - b.index);
  let best: ExperimentRow | undefined;
  const out: LoopAnalysis = { best: null, sinceBest: 0, plateau: false, knobs: { runs: 0, scored: 0, best: null }, patches: [] };
  for (const r of own) {
    const before = best?.publicScore ?? null;
    const patch = patches.get(r.id);
    if (patch && r.proposer !== CONFIRM_PROPOSER) {
      out.patches.push({
        index: r.index,
        summary: patch.summary,
        status: r.status,
        publicScore: r.publicScore,
        bestBefore: before,
        improved: r.publicScore !== null && improves(r.publicScore, before ?? undefined, mode),
      });
    } else if (!patch && r.proposer !== CONFIRM_PROPOSER) {
      out.knobs.runs++;
      if (r.publicScore !== null) {
        out.knobs.scored++;
        if (improves(r.publicScore, out.knobs.best ?? undefined, mode)) out.knobs.best = r.publicScore;
      }
    }
    if (r.publicScore !== null && improves(r.publicScore, before ?? undefined, mode)) best = r;
  }
  if (best) {
    out.best = { index: best.index, publicScore: best.publicScore!, patch: patches.get(best.id)?.summary ?? null };
    out.sinceBest = own.filter((r) => r.index > best!.index).length;
    out.plateau = out.sinceBest >= spec.innerLoop.batchSize;
  }
  return out;
}
