// Inner loops: a campaign's list (with experiment counts and best public score aggregated in SQL) and one loop.
import type { Db } from '../../db/client';
import { one, rows } from './run-query';

export interface InnerLoopRow {
  id: string;
  campaign_id: string;
  /** The campaign version the loop runs. */
  campaign_version_id: string | null;
  dataset_version_id: string;
  base_checkpoint_id: string | null;
  status: string;
  best_experiment_id: string | null;
  created_at: Date;
  updated_at: Date;
  experiments: number;
  running: number;
  best_public: number | null;
  metric: string;
  mode: 'min' | 'max';
}

// A loop's selection is its pinned version's (the campaign's latest only for a row that pins none).
const SELECT = `SELECT l.id, l.campaign_id, l.campaign_version_id, l.dataset_version_id, l.base_checkpoint_id, l.status, l.best_experiment_id, l.created_at, l.updated_at,
  coalesce(v.spec->'selection'->>'metric', c.spec->'selection'->>'metric', 'bits_per_byte') AS metric, coalesce(v.spec->'selection'->>'mode', c.spec->'selection'->>'mode', 'min') AS mode,
  x.experiments, x.running, CASE WHEN coalesce(v.spec->'selection'->>'mode', c.spec->'selection'->>'mode', 'min') = 'max' THEN x.max_public ELSE x.min_public END AS best_public
  FROM inner_loops l LEFT JOIN campaigns c ON c.id = l.campaign_id LEFT JOIN campaign_versions v ON v.id = l.campaign_version_id
  CROSS JOIN LATERAL (SELECT count(*)::int AS experiments, (count(*) FILTER (WHERE e.status = 'running'))::int AS running,
    max(e.public_score) AS max_public, min(e.public_score) AS min_public FROM experiments e WHERE e.inner_loop_id = l.id) x`;

export const innerLoopsOf = (db: Db, campaignId: string, limit: number, offset: number): Promise<InnerLoopRow[]> =>
  rows<InnerLoopRow>(db, `${SELECT} WHERE l.campaign_id = $1 ORDER BY l.created_at DESC, l.id LIMIT $2 OFFSET $3`, [
    campaignId,
    limit,
    offset,
  ]);

export const countInnerLoops = async (db: Db, campaignId: string): Promise<number> =>
  (await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM inner_loops WHERE campaign_id = $1', [campaignId]))?.n ?? 0;

export const getInnerLoop = (db: Db, id: string): Promise<InnerLoopRow | undefined> =>
  one<InnerLoopRow>(db, `${SELECT} WHERE l.id = $1`, [id]);

/** The campaign version an inner loop pinned at its start (undefined for an unknown loop). */
export const campaignVersionOfLoop = async (db: Db, innerLoopId: string): Promise<string | null | undefined> =>
  (await one<{ v: string | null }>(db, 'SELECT campaign_version_id AS v FROM inner_loops WHERE id = $1', [innerLoopId]))?.v;
