// checkContamination: runs before any training run on a dataset version (the inner loop calls it first). Every
// example (and both sides of every preference pair) of the version against every item of every suite and split, and every suite's canaries and held-out
// canaries; a contaminated version is refused with ContaminatedDatasetError (non-retryable) naming the examples
// and the items they overlap.
import { eq, ne } from 'drizzle-orm';
import { ContaminatedDatasetError, NotFoundError } from '../../core/errors';
import { describeContamination, findContamination, type ContaminationFinding } from '../../core/dataset/contamination';
import { datasetVersions, evalItems, evalSuites, examples, trainPairs } from '../../db/schema';
import type { ActivityDeps } from '../deps';
import { readHeldoutItems } from './heldout-items';
import type { CheckContaminationInput, ContaminationReport } from '../../contracts/eval';

export async function checkContamination(deps: ActivityDeps, input: CheckContaminationInput): Promise<ContaminationReport> {
  const { db } = deps;
  const [version] = await db.select({ id: datasetVersions.id }).from(datasetVersions).where(eq(datasetVersions.id, input.datasetVersionId));
  if (!version) throw new NotFoundError(`dataset version "${input.datasetVersionId}" does not exist`);
  const rows = await db
    .select({ source: examples.source, sourceRef: examples.sourceRef, content: examples.content })
    .from(examples)
    .where(eq(examples.datasetVersionId, version.id));
  // A preference pair trains on both its sides: each is checked as prompt + side.
  const pairs = await db
    .select({
      source: trainPairs.source,
      sourceRef: trainPairs.sourceRef,
      prompt: trainPairs.prompt,
      chosen: trainPairs.chosen,
      rejected: trainPairs.rejected,
    })
    .from(trainPairs)
    .where(eq(trainPairs.datasetVersionId, version.id));
  const texts = [
    ...rows.map((r) => ({ key: `${r.source}:${r.sourceRef}`, text: r.content })),
    ...pairs.flatMap((p) => [
      { key: `pair ${p.source}:${p.sourceRef}`, text: p.prompt + p.chosen },
      { key: `pair ${p.source}:${p.sourceRef}`, text: p.prompt + p.rejected },
    ]),
  ];
  const suites = await db.select({ id: evalSuites.id, settings: evalSuites.settings }).from(evalSuites);
  const items = await db
    .select({ id: evalItems.id, split: evalItems.split, prompt: evalItems.prompt, reference: evalItems.reference })
    .from(evalItems)
    .where(ne(evalItems.split, 'heldout'));
  for (const s of suites) items.push(...(await readHeldoutItems(db, s.id, `checkContamination:${input.reader}`, 'contamination')));
  // Held-out canaries are checked by name too: the overlap check would catch the items that carry them, but a bare
  // canary in an example is proof of a held-out leak on its own.
  const canaries = suites.flatMap((s) => {
    const { canaries: pub = [], heldoutCanaries = [] } = s.settings as { canaries?: string[]; heldoutCanaries?: string[] };
    return [
      ...pub.map((text, k) => ({ id: `${s.id}#canary${k}`, text })),
      ...heldoutCanaries.map((text, k) => ({ id: `${s.id}#heldout-canary${k}`, text })),
    ];
  });

  const findings: ContaminationFinding[] = findContamination(
    texts,
    items.map((i) => ({ id: i.id, split: i.split, text: i.prompt + i.reference })),
    canaries,
  );
  if (findings.length > 0) throw new ContaminatedDatasetError(describeContamination(version.id, findings));
  return { datasetVersionId: version.id, examples: rows.length, evalItems: items.length, canaries: canaries.length };
}
