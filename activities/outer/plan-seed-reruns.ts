// planSeedReruns: the gate's seed reruns before a comparison — k experiments that train the incumbent's recipe again
// with other seeds on the iteration's dataset version, from the same base as the candidate, so that their held-out
// scores give σ_seed. They are experiments with deterministic ids under one group (an inner_loops row of status
// `seed-reruns`, keyed by dataset version and recipe), so a second gate on the same version finds them done and
// reruns nothing. They never have a public score and are never candidates: nothing chooses among them.
import crypto from 'node:crypto';
import { NotFoundError } from '../../core/errors';
import { loopSettings } from '../../core/loop-settings';
import { SEED_RERUN_PROPOSER } from '../../core/gate/noise-check';
import type { Params } from '../../core/spec';
import { checkpointExperiment, experimentsByIds, recordExperiments, recordInnerLoop } from '../../services/inner-loops';
import { campaignsOf, type ActivityDeps } from '../deps';
import type { PlanSeedRerunsInput, SeedRerunPlan } from '../../contracts/outer-activities';

export { SEED_RERUN_PROPOSER };
/** The status that marks the seed reruns' group (an inner_loops row) apart from the search's loops. */
export const SEED_RERUN_GROUP_STATUS = 'seed-reruns';
/** Seed reruns' indexes start here, so their run seeds (innerLoop.seed × 1000 + index) differ from the search's. */
export const SEED_RERUN_INDEX_BASE = 100_000;

export async function planSeedReruns(deps: ActivityDeps, input: PlanSeedRerunsInput): Promise<SeedRerunPlan> {
  const { db } = deps;
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  const recipe = await recipeOf(deps, input);
  const digest = crypto
    .createHash('sha256')
    .update(JSON.stringify({ datasetVersionId: input.datasetVersionId, params: recipe.params, base: input.baseCheckpointId ?? null }))
    .digest('hex')
    .slice(0, 12);
  const groupId = `${input.campaignId}/noise/${digest}`;
  await recordInnerLoop(db, {
    id: groupId,
    campaignId: input.campaignId,
    campaignVersionId: input.campaignVersionId,
    datasetVersionId: input.datasetVersionId,
    baseCheckpointId: input.baseCheckpointId ?? null,
    status: SEED_RERUN_GROUP_STATUS,
  });
  const ids = Array.from({ length: input.seeds }, (_, i) => `${groupId}/s${i + 1}`);
  await recordExperiments(
    db,
    ids.map((id, i) => ({
      id,
      campaignId: input.campaignId,
      innerLoopId: groupId,
      campaignVersionId: input.campaignVersionId,
      index: SEED_RERUN_INDEX_BASE + i + 1,
      datasetVersionId: input.datasetVersionId,
      params: recipe.params,
      hypothesis: `seed rerun ${i + 1} of ${input.seeds} of ${recipe.source}'s recipe: measures the held-out spread across seeds; never a candidate`,
      proposer: SEED_RERUN_PROPOSER,
      status: 'proposed',
    })),
  );
  const rows = await experimentsByIds(db, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const settings = loopSettings(spec);
  return {
    groupId,
    recipeOf: recipe.source,
    toRun: ids.filter((id) => byId.get(id)?.status === 'proposed'),
    done: ids.flatMap((id) => {
      const r = byId.get(id);
      return r?.status === 'succeeded' && r.bestCheckpointId ? [r.bestCheckpointId] : [];
    }),
    maxTrainingAttempts: settings.maxTrainingAttempts,
    trainingTimeoutSeconds: settings.trainingTimeoutSeconds,
  };
}

/**
 * The incumbent's experiment params; when the incumbent is an untrained baseline (nothing to rerun: zero steps give
 * zero spread), the candidate's, which is the recipe the comparison is about.
 */
async function recipeOf(deps: ActivityDeps, input: PlanSeedRerunsInput): Promise<{ params: Params; source: string }> {
  const paramsOf = async (checkpointId: string) => {
    const row = await checkpointExperiment(deps.db, checkpointId);
    if (!row) throw new NotFoundError(`checkpoint "${checkpointId}" has no experiment: no recipe to rerun`);
    return row;
  };
  const incumbent = await paramsOf(input.incumbentCheckpointId);
  if (incumbent.proposer !== 'baseline') return { params: incumbent.params, source: `the incumbent ${incumbent.experimentId}` };
  const candidate = await paramsOf(input.candidateCheckpointId);
  return {
    params: candidate.params,
    source: `the candidate ${candidate.experimentId} (the incumbent is the untrained baseline)`,
  };
}
