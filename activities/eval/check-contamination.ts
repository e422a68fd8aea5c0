// checkContamination: runs before any training run on a dataset version (the inner loop calls it first). Every
// example (and both sides of every preference pair) of the version against every item of every suite and split, and every suite's canaries and held-out
// canaries; a contaminated version is refused with ContaminatedDatasetError (non-retryable) naming the examples
// and the items they overlap.
import { ContaminatedDatasetError, NotFoundError } from '../../core/errors';
import { describeContamination, findContamination, type ContaminationFinding } from '../../core/dataset/contamination';
import { datasetVersionById, versionExampleTexts, versionPairTexts } from '../../services/datasets/dataset-versions';
import { contaminationSources } from '../../services/suites/contamination-sources';
import type { ActivityDeps } from '../deps';
import type { CheckContaminationInput, ContaminationReport } from '../../contracts/eval';

export async function checkContamination(deps: ActivityDeps, input: CheckContaminationInput): Promise<ContaminationReport> {
  const { db } = deps;
  const version = await datasetVersionById(db, input.datasetVersionId);
  if (!version) throw new NotFoundError(`dataset version "${input.datasetVersionId}" does not exist`);
  const rows = await versionExampleTexts(db, version.id);
  // A preference pair trains on both its sides: each is checked as prompt + side.
  const pairs = await versionPairTexts(db, version.id);
  const texts = [
    ...rows.map((r) => ({ key: `${r.source}:${r.sourceRef}`, text: r.content })),
    ...pairs.flatMap((p) => [
      { key: `pair ${p.source}:${p.sourceRef}`, text: p.prompt + p.chosen },
      { key: `pair ${p.source}:${p.sourceRef}`, text: p.prompt + p.rejected },
    ]),
  ];
  const { items, canaries } = await contaminationSources(db, `checkContamination:${input.reader}`, ['public', 'heldout', 'test', 'probe']);

  const findings: ContaminationFinding[] = findContamination(texts, items, canaries);
  if (findings.length > 0) throw new ContaminatedDatasetError(describeContamination(version.id, findings));
  return { datasetVersionId: version.id, examples: rows.length, evalItems: items.length, canaries: canaries.length };
}
