// The inner loop's bookkeeping rows: the loop itself, its baseline, each experiment's end, the selection.
import { baselineParams } from '../../core/trainer-defaults';
import type { Params } from '../../core/spec';
import { recordDecision } from '../../services/decisions';
import {
  bestScoredExperiment,
  endExperiment,
  endInnerLoop,
  experimentsByIds,
  loopExperiments,
  recordExperiments,
  recordInnerLoop,
} from '../../services/inner-loops';
import { pinnedRecipe, recipeRound } from './recipe-round';

import { campaignsOf, withDefaults, type ActivityDeps } from '../deps';
import { warmStartOfCheckpoint } from './warm-start';
import type {
  FinishExperimentInput,
  FinishInnerLoopInput,
  Proposal,
  SelectBestInput,
  SelectedBest,
  StartInnerLoopInput,
} from '../../contracts/inner-activities';
import { BASELINE_PROPOSER } from '../../contracts/experiment';

export const baselineIdOf = (innerLoopId: string) => `${innerLoopId}/baseline`;

/** Records the loop and its baseline experiment: the untrained model held-out scores are compared against. */
export async function startInnerLoop(deps: ActivityDeps, input: StartInnerLoopInput): Promise<Proposal> {
  const { db } = deps;
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  await recordInnerLoop(db, {
    id: input.innerLoopId,
    campaignId: input.campaignId,
    campaignVersionId: input.campaignVersionId,
    datasetVersionId: input.datasetVersionId,
    status: 'running',
    baselineExperimentId: baselineIdOf(input.innerLoopId),
    baseCheckpointId: input.baseCheckpointId ?? null,
  });
  // A warm-started loop's baseline is its base itself: zero steps from the base's weights, in the base's shape.
  const base = input.baseCheckpointId ? await warmStartOfCheckpoint(db, input.baseCheckpointId) : null;
  const params: Params = baselineParams(spec.trainer.command, base?.params);
  const baseline = {
    id: baselineIdOf(input.innerLoopId),
    campaignId: input.campaignId,
    innerLoopId: input.innerLoopId,
    campaignVersionId: input.campaignVersionId,
    index: -1,
    datasetVersionId: input.datasetVersionId,
    params,
    hypothesis: base
      ? `the warm start's base (${base.checkpointId}), untouched: the reference every held-out score is compared with`
      : 'the untrained model: the reference every held-out score is compared with',
    proposer: BASELINE_PROPOSER,
    status: 'proposed',
  };
  await recordExperiments(db, [baseline]);
  return { experimentId: baseline.id, index: -1, params, hypothesis: baseline.hypothesis, proposer: BASELINE_PROPOSER };
}

export async function finishExperiment(deps: ActivityDeps, input: FinishExperimentInput): Promise<void> {
  await endExperiment(deps.db, input.experimentId, {
    status: input.status,
    bestCheckpointId: input.checkpointId ?? null,
    error: input.error ?? null,
  });
}

/** The best succeeded experiment by the public-split score (ties: the earlier experiment), recorded as a decision. */
export async function selectBest(deps: ActivityDeps, input: SelectBestInput): Promise<SelectedBest | null> {
  const { db } = deps;
  let row = await bestScoredExperiment(db, input.innerLoopId, input.mode);
  if (!row) return null;
  // A recipe campaign's winner is the best kept experiment: the last batch's patches are kept or reverted first (as
  // each batch's start does), so a lucky or unconfirmed patch never becomes the loop's candidate.
  const spec = row.campaignVersionId ? await campaignsOf(deps).resolve(row.campaignVersionId) : undefined;
  const recipe = spec && pinnedRecipe(spec);
  if (spec && recipe) {
    const round = await recipeRound(db, spec, recipe, input.innerLoopId, await loopExperiments(db, input.innerLoopId), 0);
    const [kept] = round.base.experimentId ? await experimentsByIds(db, [round.base.experimentId]) : [];
    if (!kept?.bestCheckpointId || kept.status !== 'succeeded') return null;
    row = kept;
  }
  const best: SelectedBest = {
    experimentId: row.id,
    checkpointId: row.bestCheckpointId!,
    publicScore: row.publicScore!,
    params: row.params,
  };
  await recordDecision(db, {
    id: `${input.innerLoopId}/select`,
    campaignId: row.campaignId,
    kind: 'select',
    checkpointId: best.checkpointId,
    experimentId: best.experimentId,
    rule: `best public ${input.metric} (${input.mode})`,
    reason: `${best.experimentId} has the ${input.mode === 'min' ? 'lowest' : 'highest'} public ${input.metric} (${best.publicScore.toFixed(4)})`,
    figures: { publicScore: best.publicScore },
    accepted: true,
  });
  return best;
}

export async function finishInnerLoop(deps: ActivityDeps, input: FinishInnerLoopInput): Promise<void> {
  await endInnerLoop(deps.db, input.innerLoopId, {
    status: input.status,
    bestExperimentId: input.bestExperimentId ?? null,
    summary: input.summary,
    at: new Date(withDefaults(deps).clock.now()),
  });
}
