// buildIterationDataset: one outer iteration's dataset version. Its parent is the previous iteration's version (so
// feedback ingested by a rejected iteration is not lost), or the task's base version; it adds the examples made from
// this iteration's feedback critiques, with the spec's mixing weights and loss weights per category derived from the
// production model's public-split results. Content-addressed: a retry, or a second workflow on the same claim,
// yields the same version.
import { higherIsBetter, itemsOfMetric } from '../../core/eval-suite/suite-metrics';
import { lossWeightsFromScores, type CategoryScore } from '../../core/dataset/loss-weights';
import { feedbackCritiqueIds } from '../../services/critiques';
import { itemCategories } from '../../services/suites/suite-items';
import { splitScores } from '../../services/eval-results';
import { previousDatasetVersionId, setIterationDatasetVersion } from '../../services/outer-iterations';
import { campaignsOf, type ActivityDeps } from '../deps';
import { buildDatasetVersion } from './build-dataset-version';
import { taskTeacherOf } from '../../services/example-tasks';
import type { BuildIterationDatasetInput, BuildIterationDatasetResult } from '../../contracts/outer-activities';

export async function buildIterationDataset(deps: ActivityDeps, input: BuildIterationDatasetInput): Promise<BuildIterationDatasetResult> {
  const { db } = deps;
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  const parentVersionId = (await previousDatasetVersionId(db, input.campaignId, input.iteration)) ?? input.baseVersionId;
  const critiqueIds = await feedbackCritiqueIds(db, input.outerIterationId);
  const lossWeights = input.incumbentCheckpointId
    ? await lossWeightsOf(deps, input.incumbentCheckpointId, input.suiteId, spec.outerLoop.lossWeights)
    : {};

  const built = await buildDatasetVersion(deps, {
    campaignId: input.campaignId,
    parentVersionId,
    critiqueIds,
    mix: spec.outerLoop.mixWeights,
    ...(spec.outerLoop.sourceShares ? { shares: spec.outerLoop.sourceShares } : {}),
    lossWeights,
    signals: spec.outerLoop.signals,
    categoryOf: taskTeacherOf(spec.outerLoop.teacher.task)?.categoryOf,
  });
  await setIterationDatasetVersion(db, input.outerIterationId, built.versionId);
  return { versionId: built.versionId, parentVersionId, created: built.created, counts: built.counts, lossWeights };
}

/**
 * Per-category means of the checkpoint's public-split scores: loss items (bits per byte, categories are languages,
 * the same categories corpus examples carry) when it has them, else completion items (exact match), else every
 * graded item (pass rate: a custom suite's categories, which its dataset's examples carry too).
 */
async function lossWeightsOf(
  deps: ActivityDeps,
  checkpointId: string,
  suiteId: string,
  bounds: { min: number; max: number },
): Promise<Record<string, number>> {
  const result = await splitScores(deps.db, checkpointId, suiteId, 'public');
  if (!result) return {};
  const items = await itemCategories(deps.db, suiteId, ['public']);
  for (const metric of ['bits_per_byte', 'exact_match', 'pass_rate']) {
    const selects = itemsOfMetric(metric)!;
    const sums = new Map<string, { sum: number; n: number }>();
    for (const i of items) {
      const v = result.perItem[i.id];
      if (!selects(i) || v === undefined) continue;
      const s = sums.get(i.category) ?? { sum: 0, n: 0 };
      sums.set(i.category, { sum: s.sum + v, n: s.n + 1 });
    }
    if (sums.size === 0) continue;
    const scores: CategoryScore[] = [...sums].map(([category, s]) => ({ category, mean: s.sum / s.n, items: s.n }));
    return lossWeightsFromScores(scores, higherIsBetter(metric), bounds);
  }
  return {};
}
