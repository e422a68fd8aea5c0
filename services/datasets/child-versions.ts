// The outer loop's dataset versions: each derived from a parent version (its examples and preference pairs, plus
// those made from an iteration's critiques), written once under a content-addressed id. What the builder reads of
// the parent (its row: dataset-versions.ts) and of its dataset, the eval item texts it checks for overlap, and the one transaction that records a
// new version's rows.
import { eq } from 'drizzle-orm';
import { datasets, datasetVersions, evalItems, examples, trainPairs } from '../../db/schema';
import type { Queryable } from '../queryable';

export type DatasetRow = typeof datasets.$inferSelect;
export type NewDataset = typeof datasets.$inferInsert;
export type DatasetVersionRow = typeof datasetVersions.$inferSelect;
export type NewDatasetVersion = typeof datasetVersions.$inferInsert;
export type ExampleRow = typeof examples.$inferSelect;
export type NewExample = typeof examples.$inferInsert;
export type TrainPairRow = typeof trainPairs.$inferSelect;
export type NewTrainPair = typeof trainPairs.$inferInsert;

export async function versionIsRecorded(q: Queryable, id: string): Promise<boolean> {
  const [row] = await q.select({ id: datasetVersions.id }).from(datasetVersions).where(eq(datasetVersions.id, id));
  return row !== undefined;
}

export async function examplesOfVersion(q: Queryable, versionId: string): Promise<ExampleRow[]> {
  return q.select().from(examples).where(eq(examples.datasetVersionId, versionId));
}

export async function pairsOfVersion(q: Queryable, versionId: string): Promise<TrainPairRow[]> {
  return q.select().from(trainPairs).where(eq(trainPairs.datasetVersionId, versionId));
}

export async function datasetRow(q: Queryable, id: string): Promise<DatasetRow | undefined> {
  const [row] = await q.select().from(datasets).where(eq(datasets.id, id));
  return row;
}

/** Every eval item of every suite and split, as the overlap check reads it: id, prompt and reference. */
export async function allEvalItemTexts(q: Queryable): Promise<{ id: string; prompt: string; reference: string }[]> {
  return q.select({ id: evalItems.id, prompt: evalItems.prompt, reference: evalItems.reference }).from(evalItems);
}

/**
 * Records a new version's rows, meant for one transaction (`tx`): its dataset when new, its examples and pairs (200
 * a statement), then the version row, each ON CONFLICT DO NOTHING. True when this call wrote the version row.
 */
export async function recordChildVersion(
  tx: Queryable,
  rows: { dataset?: NewDataset; examples: NewExample[]; pairs: NewTrainPair[]; version: NewDatasetVersion },
): Promise<boolean> {
  if (rows.dataset) await tx.insert(datasets).values(rows.dataset).onConflictDoNothing();
  for (let i = 0; i < rows.examples.length; i += 200)
    await tx
      .insert(examples)
      .values(rows.examples.slice(i, i + 200))
      .onConflictDoNothing();
  for (let i = 0; i < rows.pairs.length; i += 200)
    await tx
      .insert(trainPairs)
      .values(rows.pairs.slice(i, i + 200))
      .onConflictDoNothing();
  const written = await tx.insert(datasetVersions).values(rows.version).onConflictDoNothing().returning({ id: datasetVersions.id });
  return written.length > 0;
}
