// A campaign's dataset versions with their sources and sizes (the counts per source the builder recorded).
import { desc, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { datasets, datasetVersions } from '../../db/schema';

export type DatasetVersionRow = Awaited<ReturnType<typeof datasetVersionsOf>>[number];

export async function datasetVersionsOf(db: Db, campaignId: string, limit = 100) {
  const rows = await db
    .select({
      id: datasetVersions.id,
      dataset: datasets.name,
      parent_ids: datasetVersions.parentIds,
      counts_by_source: datasetVersions.countsBySource,
      mix_weights: datasetVersions.mixWeights,
      content_hash: datasetVersions.contentHash,
      created_at: datasetVersions.createdAt,
    })
    .from(datasetVersions)
    .innerJoin(datasets, eq(datasets.id, datasetVersions.datasetId))
    .where(eq(datasets.campaignId, campaignId))
    .orderBy(desc(datasetVersions.createdAt))
    .limit(limit);
  // The version's size: its counts per source (a handful of sources, already in the row) summed.
  return rows.map((v) => ({ ...v, examples: Object.values(v.counts_by_source).reduce((a, n) => a + Number(n), 0) }));
}
