// planSeedReruns: the gate's seed reruns before a comparison — k experiments that train the incumbent's recipe again
// with other seeds on the iteration's dataset version, from the same base as the candidate, so that their held-out
// scores give σ_seed. They are experiments with deterministic ids under one group (an inner_loops row of status
// `seed-reruns`, keyed by dataset version, recipe and the reruns' trainer), so a second gate on the same version finds
// them done and reruns nothing. They never have a public score and are never candidates: nothing chooses among them.
// They are also the held-out leak check's reference model, so they run a trainer the candidate's code did not write
// where there is one (core/gate/reference-control.ts): the task's reference trainer, else the incumbent's pinned
// trainer, else the candidate's own. Another trainer than the campaign version's is run under a derived version
// (services/campaigns/reference-version.ts) that the reruns' experiments pin; the group's summary records the choice.
// In a recipe campaign (trainer.recipe) the recipe is code as well as knobs: reruns by the candidate's own trainer run
// the recipe commit of the experiment whose params they retrain (a patch experiment's own commit, not the version's
// pinned one), and that commit is in the group's key; a reference trainer is another program and runs no commit.
import crypto from 'node:crypto';
import { NotFoundError } from '../../core/errors';
import { InvalidSpecError, type CampaignSpec, type Params } from '../../core/spec';
import { loopSettings } from '../../core/loop-settings';
import { SEED_RERUN_PROPOSER } from '../../core/gate/noise-check';
import { referenceTrainers, type ReferenceTrainer } from '../../core/gate/reference-control';
import { canonicalJson } from '../../services/campaigns/campaign-versions';
import { referenceVersionOf } from '../../services/campaigns/reference-version';
import { checkpointById } from '../../services/checkpoints';
import { experimentById } from '../../services/experiments';
import { experimentCommit } from '../../services/recipes/experiment-commit';
import { checkpointExperiment, experimentsByIds, recordExperiments, recordInnerLoop } from '../../services/inner-loops';
import { taskForSpec } from '../../services/task-registry';
import { campaignsOf, type ActivityDeps } from '../deps';
import type { PlanSeedRerunsInput, SeedRerunPlan } from '../../contracts/outer-activities';
import { BASELINE_PROPOSER } from '../../contracts/experiment';

export { SEED_RERUN_PROPOSER };
/** The status that marks the seed reruns' group (an inner_loops row) apart from the search's loops. */
export const SEED_RERUN_GROUP_STATUS = 'seed-reruns';
/** Seed reruns' indexes start here, so their run seeds (innerLoop.seed × 1000 + index) differ from the search's. */
export const SEED_RERUN_INDEX_BASE = 100_000;

/** What the reruns' group records of its trainer (its inner_loops row's `summary.reference`). */
export interface RecordedReference {
  source: ReferenceTrainer['source'];
  independent: boolean;
  control: string;
  /** The campaign version the reruns pinned: the campaign's own, or a derived `<name>@ref-<hash>`. */
  versionId: string;
}

export async function planSeedReruns(deps: ActivityDeps, input: PlanSeedRerunsInput): Promise<SeedRerunPlan> {
  const { db } = deps;
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  const recipe = await recipeOf(deps, input);
  const reference = await referenceOf(deps, input, spec, recipe.params);
  const commit = reference.source === 'candidate' ? await experimentCommit(db, recipe.experimentId) : null;
  // The reruns' trainer is in the key: reruns by another trainer (an earlier gate's, the candidate's own) are not this
  // reference, and are never reused as it.
  const digest = crypto
    .createHash('sha256')
    .update(
      JSON.stringify({
        datasetVersionId: input.datasetVersionId,
        params: recipe.params,
        base: input.baseCheckpointId ?? null,
        trainer: canonicalJson(reference.trainer),
        // Only when there is one, so the groups of campaigns without a recipe keep their ids.
        ...(commit ? { commit } : {}),
      }),
    )
    .digest('hex')
    .slice(0, 12);
  const groupId = `${input.campaignId}/noise/${digest}`;
  const recorded: RecordedReference = {
    source: reference.source,
    independent: reference.independent,
    control: reference.control,
    versionId: reference.versionId,
  };
  await recordInnerLoop(db, {
    id: groupId,
    campaignId: input.campaignId,
    campaignVersionId: reference.versionId,
    datasetVersionId: input.datasetVersionId,
    baseCheckpointId: input.baseCheckpointId ?? null,
    status: SEED_RERUN_GROUP_STATUS,
    summary: { reference: recorded },
  });
  const ids = Array.from({ length: input.seeds }, (_, i) => `${groupId}/s${i + 1}`);
  await recordExperiments(
    db,
    ids.map((id, i) => ({
      id,
      campaignId: input.campaignId,
      innerLoopId: groupId,
      campaignVersionId: reference.versionId,
      index: SEED_RERUN_INDEX_BASE + i + 1,
      datasetVersionId: input.datasetVersionId,
      params: recipe.params,
      hypothesis: `seed rerun ${i + 1} of ${input.seeds} of ${recipe.source}'s recipe by ${SOURCE_TEXT[reference.source]}: measures the held-out spread across seeds and is the leak check's reference; never a candidate`,
      proposer: SEED_RERUN_PROPOSER,
      status: 'proposed',
      ...(commit ? { recipeCommit: commit } : {}),
    })),
  );
  const rows = await experimentsByIds(db, ids);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const settings = loopSettings(spec);
  return {
    groupId,
    recipeOf: recipe.source,
    reference: reference.control,
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
async function recipeOf(deps: ActivityDeps, input: PlanSeedRerunsInput): Promise<{ params: Params; source: string; experimentId: string }> {
  const paramsOf = async (checkpointId: string) => {
    const row = await checkpointExperiment(deps.db, checkpointId);
    if (!row) throw new NotFoundError(`checkpoint "${checkpointId}" has no experiment: no recipe to rerun`);
    return row;
  };
  const incumbent = await paramsOf(input.incumbentCheckpointId);
  if (incumbent.proposer !== BASELINE_PROPOSER)
    return { params: incumbent.params, source: `the incumbent ${incumbent.experimentId}`, experimentId: incumbent.experimentId };
  const candidate = await paramsOf(input.candidateCheckpointId);
  return {
    params: candidate.params,
    source: `the candidate ${candidate.experimentId} (the incumbent is the untrained baseline)`,
    experimentId: candidate.experimentId,
  };
}

const SOURCE_TEXT: Record<ReferenceTrainer['source'], string> = {
  task: "the task's reference trainer",
  incumbent: "the incumbent's pinned trainer",
  candidate: "the candidate's own trainer",
};

/**
 * The reruns' trainer (core/gate/reference-control.ts referenceTrainers) and the campaign version they pin: the first
 * choice that the campaign's spec accepts (a derived version is validated as any spec; the candidate's own always is).
 */
async function referenceOf(
  deps: ActivityDeps,
  input: PlanSeedRerunsInput,
  spec: CampaignSpec,
  params: Params,
): Promise<ReferenceTrainer & { versionId: string }> {
  const { db } = deps;
  const candidate = await checkpointById(db, input.candidateCheckpointId);
  const incumbent = await pinnedTrainerOf(deps, input.incumbentCheckpointId);
  const task = taskForSpec(spec.task).referenceTrainer;
  const choices = referenceTrainers({
    candidate: spec.trainer,
    recipe: { params, ...(candidate?.format ? { format: candidate.format } : {}) },
    ...(task ? { task } : {}),
    ...(incumbent ? { incumbent } : {}),
  });
  for (const choice of choices) {
    if (choice.source === 'candidate') return { ...choice, versionId: input.campaignVersionId };
    try {
      const { versionId } = await referenceVersionOf(db, { versionId: input.campaignVersionId, spec }, choice.trainer);
      return { ...choice, versionId };
    } catch (e) {
      if (!(e instanceof InvalidSpecError)) throw e;
    }
  }
  // referenceTrainers ends with the candidate's own, so this is never reached.
  return { ...choices[choices.length - 1], versionId: input.campaignVersionId };
}

/** The trainer block of the campaign version whose experiment produced the checkpoint; undefined when none is pinned. */
async function pinnedTrainerOf(deps: ActivityDeps, checkpointId: string) {
  const row = await checkpointExperiment(deps.db, checkpointId);
  const versionId = row && (await experimentById(deps.db, row.experimentId))?.campaignVersionId;
  if (!versionId) return undefined;
  return { versionId, trainer: (await campaignsOf(deps).resolve(versionId)).trainer };
}
