// proposeExperiments: the spec's sampler (TPE, random or grid search, or a registered one; core/sampler/registry.ts)
// over this loop's history, or, when the spec names a proposer model and the worker has an endpoint, the hybrid agent
// proposer (agent-batch.ts), written as experiment rows with deterministic ids. A retried call returns the rows the
// first call wrote. A campaign with a recipe (trainer.recipe) first keeps or reverts the loop's finished patches and
// starts confirmation reruns and researchers' queued patches (recipe-batch.ts); every experiment then runs a recipe
// commit (a patch's, else the best kept one), written with its row and its patch's row in one transaction.
import { createSampler, fixKnobs, proposeWith, type Trial } from '../../core/sampler';
import type { Params } from '../../core/spec';
import { loopExperiments, recordExperiments } from '../../services/inner-loops';
import { agentCallerFor } from '../agents/agent-caller';
import { campaignsOf, type ActivityDeps } from '../deps';
import { agentBatch, type BatchEntry } from './agent-batch';
import { earlierTrials } from './campaign-trials';
import type { Proposal, ProposeInput } from '../../contracts/inner-activities';
import { BASELINE_PROPOSER } from '../../contracts/experiment';
import { pinKnobs, warmStartOfLoop } from './warm-start';
import { recipeBatch } from './recipe-batch';
import { pinnedRecipe } from './recipe-round';

export const experimentIdOf = (innerLoopId: string, index: number) => `${innerLoopId}/e${index}`;

export async function proposeExperiments(deps: ActivityDeps, input: ProposeInput): Promise<Proposal[]> {
  const { db } = deps;
  const existing = await batchRows(deps, input);
  if (existing.length === input.count) return existing;

  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  const rows = await loopExperiments(db, input.innerLoopId, { to: input.startIndex });
  const sign = spec.selection.mode === 'min' ? 1 : -1;
  const own: Trial[] = rows
    .filter((r) => r.proposer !== BASELINE_PROPOSER)
    .map((r) => ({
      params: r.params,
      value: r.publicScore === null ? undefined : sign * r.publicScore,
      state: trialState(r.status, r.publicScore),
    }));
  // The campaign's earlier loops of the same space go first: seen configurations are never re-proposed, and their
  // results seed the model, so a warm-started loop does not repeat last loop's start-up draws.
  const earlier = await earlierTrials(db, input.campaignId, input.innerLoopId, spec.searchSpace, spec.selection.mode);
  const history: Trial[] = [...earlier.trials, ...own];
  const earlierFinished = earlier.trials.filter((t) => t.state === 'finished').length;
  const base = await warmStartOfLoop(db, input.innerLoopId);
  const pinned = spec.outerLoop.warmStart.pinnedKnobs;
  const pinnedValues = base ? Object.fromEntries(pinned.filter((k) => base.params[k] !== undefined).map((k) => [k, base.params[k]])) : {};
  // Pinned knobs are fixed in the space the sampler draws from, so "not seen before" holds for the run's real config.
  const space = fixKnobs(spec.searchSpace, pinnedValues);
  const { proposer, startupTrials, samplerOptions, seed } = spec.innerLoop;
  const sampler = createSampler(proposer, { startupTrials, options: samplerOptions });
  const drawn = proposeWith(sampler, proposer, { space, history, count: input.count, seed });
  const fromEarlier =
    earlier.trials.length > 0
      ? `; warm-started from ${earlier.trials.length} earlier trials of this campaign's search space (${earlierFinished} finished, in ${earlier.loops.length} loop${earlier.loops.length === 1 ? '' : 's'}: ${earlier.loops.join(', ')}), none of them proposed again`
      : '';
  const params = base ? drawn.params.map((p) => pinKnobs(p, base, pinned)) : drawn.params;
  const warm = base
    ? ` (warm start from ${base.checkpointId}; pinned: ${
        pinned
          .filter((k) => base.params[k] !== undefined)
          .map((k) => `${k}=${String(base.params[k])}`)
          .join(', ') || 'none'
      })`
    : '';
  const builtinAll: BatchEntry[] = params.map((p, i) => ({
    params: p,
    hypothesis: drawn.labels[i].hypothesis + fromEarlier + warm,
    proposer: drawn.labels[i].proposer,
  }));
  const recipe = pinnedRecipe(spec);
  const code = recipe ? await recipeBatch(deps, spec, recipe, input, rows, builtinAll[0]) : undefined;
  const fixed = code?.fixed ?? [];
  const count = input.count - fixed.length;
  const skip = code?.tookControl ? 1 : 0;
  const builtin = builtinAll.slice(skip, skip + count);
  const model = spec.agents.proposer.model;
  const agent = model ? agentCallerFor(db, spec, deps.agentEnv ?? process.env) : undefined;
  const pin = (p: Params) => (base ? pinKnobs(p, base, pinned) : p);
  const proposed =
    model && agent && count > 0
      ? await agentBatch(deps, {
          spec,
          innerLoopId: input.innerLoopId,
          startIndex: input.startIndex,
          count,
          rows,
          history,
          builtin,
          pin,
          agent,
          model,
          ...(code ? { recipe: { view: code.view, check: code.checker(model), notes: code.notes } } : {}),
        })
      : builtin;
  const batch = [...fixed, ...proposed];
  const values = batch.map((b, i) => ({
    id: experimentIdOf(input.innerLoopId, input.startIndex + i),
    campaignId: input.campaignId,
    innerLoopId: input.innerLoopId,
    campaignVersionId: input.campaignVersionId,
    index: input.startIndex + i,
    datasetVersionId: input.datasetVersionId,
    params: b.params,
    hypothesis: b.proposer === 'agent' ? b.hypothesis + warm : b.hypothesis,
    proposer: b.proposer,
    status: 'proposed',
    ...(code ? { recipeCommit: b.commit ?? code.base.commit } : {}),
  }));
  if (code)
    await db.transaction(async (tx) => {
      await recordExperiments(tx, values);
      await code.record(tx, values, batch);
    });
  else await recordExperiments(db, values);
  return batchRows(deps, input);
}

async function batchRows(deps: ActivityDeps, input: ProposeInput): Promise<Proposal[]> {
  const rows = await loopExperiments(deps.db, input.innerLoopId, { from: input.startIndex, to: input.startIndex + input.count });
  return rows.map((r) => ({
    experimentId: r.id,
    index: r.index,
    params: r.params,
    hypothesis: r.hypothesis,
    proposer: r.proposer,
  }));
}

/**
 * A failed or timed-out run counts with the pruned ones as a bad trial (TPE's `pruned`): on the built-in task a
 * failure is almost always a diverged learning rate, which the sampler should learn to avoid, not ignore.
 */
function trialState(status: string, publicScore: number | null): Trial['state'] {
  if (status === 'succeeded' && publicScore !== null) return 'finished';
  if (status === 'pruned' || status === 'failed' || status === 'timed_out') return 'pruned';
  return 'pending';
}
