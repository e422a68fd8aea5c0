// A batch of a campaign with a recipe (trainer.recipe), around the proposer: keep or revert first (recipe-round.ts),
// then the batch's fixed entries (confirmation reruns, then researchers' queued patches, checked against the best
// commit as an agent's are), the checker the agent's patches go through (each refusal recorded at once with its
// reason, under an id from the batch and the check's place in it, so a retried activity writes the same rows), and
// the write of the accepted patches with their experiments, in the transaction that records the batch.
import { checkPatch } from '../recipes/check-patch';
import { knobValueProblems } from '../../core/knob-values';
import type { PatchChecker, PatchVerdict, RecipeView } from '../../agents/proposer';
import type { CampaignSpec } from '../../core/spec';
import type { ProposeInput } from '../../contracts/inner-activities';
import type { ExperimentRow, NewExperiment } from '../../services/inner-loops';
import type { Queryable } from '../../services/queryable';
import { queuedPatches, settleQueuedPatch } from '../../services/recipes/loop-patches';
import { recipeFiles } from '../../services/recipes/recipe-files';
import { recordPatch, triedPatches } from '../../services/recipes/recipe-patches';
import type { ActivityDeps } from '../deps';
import type { BatchEntry } from './agent-batch';
import { CONFIRM_PROPOSER, recipeRound, type PinnedRecipe, type RecipeBase } from './recipe-round';

/** Patches (and their outcomes) the proposer's context lists as tried, newest last. */
const TRIED_SHOWN = 50;

interface Accepted {
  id: string;
  diff: string;
  normalizedHash: string;
  summary: string;
  hypothesis: string;
  proposer: string;
  /** A researcher's queued row, settled rather than inserted. */
  queued: boolean;
}

export interface RecipeBatch {
  base: RecipeBase;
  /** The batch's first place went to the sampler's first draw, as the control run of the best commit. */
  tookControl: boolean;
  /** Confirmation reruns and researchers' patches: the batch's first entries. */
  fixed: BatchEntry[];
  notes: string[];
  view: RecipeView;
  /** The agent's patch checks, against the best commit; `model` names the proposer in the patch rows. */
  checker(model: string): PatchChecker;
  /** Writes the accepted patches with their experiments (`values`, with `entries` in the same order). */
  record(q: Queryable, values: NewExperiment[], entries: BatchEntry[]): Promise<void>;
}

export async function recipeBatch(
  deps: ActivityDeps,
  spec: CampaignSpec,
  recipe: PinnedRecipe,
  input: ProposeInput,
  rows: ExperimentRow[],
  control: BatchEntry | undefined,
): Promise<RecipeBatch> {
  const { db, home } = deps;
  const round = await recipeRound(db, spec, recipe, input.innerLoopId, rows, input.count);
  const { base } = round;
  const params = base.params ?? control?.params ?? {};
  const prefix = `${input.innerLoopId}/b${input.startIndex}/`;
  // The duplicate rules compare with patches that ran (a refused one fails its own rule again, and a repair may be
  // close to the refused patch it fixes), before this batch, and with this batch's accepted ones.
  const campaignTried = await triedPatches(db, spec.name);
  const ran = campaignTried.filter((p) => p.status === 'accepted' && !p.id.startsWith(prefix));
  const batchTried: { normalizedHash: string; diff: string }[] = [];
  const accepted = new Map<string, Accepted>();
  const check = async (diff: string): Promise<PatchVerdict & { normalizedHash?: string }> => {
    const r = await checkPatch({
      home,
      campaign: spec.name,
      baseCommit: base.commit,
      diff,
      mutable: recipe.mutable,
      maxBytes: recipe.maxPatchBytes,
      tried: [...ran, ...batchTried],
      unsandboxed: spec.trainer.unsandboxed,
    });
    if (!r.ok) return { ok: false, reason: r.reason, normalizedHash: r.normalizedHash };
    batchTried.push({ normalizedHash: r.normalizedHash, diff });
    return { ok: true, commit: r.commit, summary: r.summary, hash: r.normalizedHash, normalizedHash: r.normalizedHash };
  };

  const notes = [...round.notes];
  // Until an experiment on the best commit has a public score, a patch has nothing to be judged against: the batch's
  // first place is a control, the sampler's first draw on that commit, whose knobs the patches run with.
  const needsControl = base.score === undefined && control !== undefined;
  if (needsControl)
    notes.push(`no scored experiment on ${base.commit.slice(0, 12)} yet: the sampler's first draw runs on it as the control`);
  const fixed: BatchEntry[] = [
    ...(needsControl
      ? [
          {
            ...control,
            hypothesis: `${control.hypothesis}; the control run of recipe ${base.commit.slice(0, 12)} its patches are judged against`,
          },
        ]
      : []),
    ...round.confirmations,
  ].slice(0, input.count);
  for (const q of await queuedPatches(db, input.innerLoopId)) {
    if (fixed.length >= input.count) break;
    // The researcher's knob values (`flywheel propose --params`), checked when proposed, again against this version's
    // space (a loop may have moved on to another); the rest are the best's.
    const knobs = q.params ? knobValueProblems(spec.searchSpace, q.params) : [];
    if (knobs.length > 0) {
      const reason = `params: ${knobs[0]}`;
      await settleQueuedPatch(db, q.id, { reason });
      notes.push(`${q.proposer}'s patch ${q.id} rejected: ${reason}`);
      continue;
    }
    const v = await check(q.diff);
    if (!v.ok) {
      await settleQueuedPatch(db, q.id, { reason: v.reason });
      notes.push(`${q.proposer}'s patch ${q.id} rejected: ${v.reason}`);
      continue;
    }
    accepted.set(v.commit, {
      id: q.id,
      diff: q.diff,
      normalizedHash: v.hash,
      summary: v.summary,
      hypothesis: q.hypothesis,
      proposer: q.proposer,
      queued: true,
    });
    fixed.push({
      params: q.params ? { ...params, ...q.params } : params,
      hypothesis: `${q.hypothesis || `${q.proposer}'s patch`} [patch ${v.summary}]`,
      proposer: q.proposer,
      commit: v.commit,
    });
  }

  const shown = campaignTried.slice(-TRIED_SHOWN);
  const view: RecipeView = {
    bestCommit: base.commit,
    bestParams: params,
    mutable: recipe.mutable,
    files: recipeFiles(home, spec.name, base.commit, recipe.mutable),
    maxPatchBytes: recipe.maxPatchBytes,
    tried: shown.map((p) => ({ hash: p.normalizedHash.slice(0, 12), summary: p.summary, status: p.status, reason: p.reason })),
  };

  return {
    base,
    tookControl: needsControl,
    fixed,
    notes,
    view,
    checker(model) {
      let n = 0;
      return async (diff, hypothesis) => {
        const id = `${prefix}p${n++}`;
        const v = await check(diff);
        if (v.ok) {
          accepted.set(v.commit, {
            id,
            diff,
            normalizedHash: v.hash,
            summary: v.summary,
            hypothesis,
            proposer: `agent:${model}`,
            queued: false,
          });
          return v;
        }
        await recordPatch(db, {
          id,
          campaignId: spec.name,
          innerLoopId: input.innerLoopId,
          baseCommit: base.commit,
          diff,
          normalizedHash: v.normalizedHash ?? '',
          proposer: `agent:${model}`,
          hypothesis,
          status: 'rejected',
          reason: v.reason,
        });
        return v;
      };
    },
    async record(q, values, entries) {
      const placed = new Set<string>();
      for (const [i, e] of entries.entries()) {
        const a = e.commit ? accepted.get(e.commit) : undefined;
        if (!a || e.proposer === CONFIRM_PROPOSER || placed.has(e.commit!)) continue;
        placed.add(e.commit!);
        const row = {
          experimentId: values[i].id!,
          commit: e.commit!,
          summary: a.summary,
          normalizedHash: a.normalizedHash,
          baseCommit: base.commit,
        };
        if (a.queued) await settleQueuedPatch(q, a.id, row);
        else
          await recordPatch(q, {
            id: a.id,
            campaignId: spec.name,
            innerLoopId: input.innerLoopId,
            ...row,
            diff: a.diff,
            proposer: a.proposer,
            hypothesis: a.hypothesis,
            status: 'accepted',
          });
      }
      // Accepted patches the batch had no place for: recorded as refused, so they are neither lost nor run later.
      for (const [commit, a] of accepted) {
        if (placed.has(commit) || a.queued) continue;
        await recordPatch(q, {
          id: a.id,
          campaignId: spec.name,
          innerLoopId: input.innerLoopId,
          baseCommit: base.commit,
          diff: a.diff,
          normalizedHash: a.normalizedHash,
          summary: a.summary,
          proposer: a.proposer,
          hypothesis: a.hypothesis,
          status: 'rejected',
          reason: `place: the batch of ${entries.length} had no place left for it`,
        });
      }
    },
  };
}
