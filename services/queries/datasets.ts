// A campaign's dataset versions with their sources and sizes (the counts per source the builder recorded).
import type { Db } from '../../db/client';
import { rows } from './run-query';

export interface DatasetVersionRow {
  id: string;
  dataset: string;
  parent_ids: string[];
  counts_by_source: Record<string, number>;
  mix_weights: Record<string, number>;
  examples: number;
  content_hash: string;
  created_at: Date;
}

export const datasetVersionsOf = (db: Db, campaignId: string, limit = 100): Promise<DatasetVersionRow[]> =>
  rows<DatasetVersionRow>(
    db,
    `SELECT v.id, d.name AS dataset, v.parent_ids, v.counts_by_source, v.mix_weights, v.content_hash, v.created_at,
       (SELECT coalesce(sum(value::numeric), 0)::int FROM jsonb_each_text(v.counts_by_source)) AS examples
     FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id WHERE d.campaign_id = $1 ORDER BY v.created_at DESC LIMIT $2`,
    [campaignId, limit],
  );
