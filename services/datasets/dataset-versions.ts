// A dataset version's row and the texts it trains on, as the training and eval activities read them: launchTraining
// points run.json at the version's folder, checkContamination compares its examples and pairs with the eval items.
import { eq } from 'drizzle-orm';
import { datasetVersions, examples, trainPairs } from '../../db/schema';
import type { Queryable } from '../queryable';

export type DatasetVersion = typeof datasetVersions.$inferSelect;

export async function datasetVersionById(q: Queryable, id: string): Promise<DatasetVersion | undefined> {
  const [row] = await q.select().from(datasetVersions).where(eq(datasetVersions.id, id));
  return row;
}

/** An example's origin and the text the contamination checks read (core/dataset/example-line.ts). */
export interface ExampleText {
  source: string;
  sourceRef: string;
  content: string;
}

export async function versionExampleTexts(q: Queryable, versionId: string): Promise<ExampleText[]> {
  return q
    .select({ source: examples.source, sourceRef: examples.sourceRef, content: examples.content })
    .from(examples)
    .where(eq(examples.datasetVersionId, versionId));
}

/** A preference pair's origin and its three texts. */
export interface PairTexts {
  source: string;
  sourceRef: string;
  prompt: string;
  chosen: string;
  rejected: string;
}

export async function versionPairTexts(q: Queryable, versionId: string): Promise<PairTexts[]> {
  return q
    .select({
      source: trainPairs.source,
      sourceRef: trainPairs.sourceRef,
      prompt: trainPairs.prompt,
      chosen: trainPairs.chosen,
      rejected: trainPairs.rejected,
    })
    .from(trainPairs)
    .where(eq(trainPairs.datasetVersionId, versionId));
}
