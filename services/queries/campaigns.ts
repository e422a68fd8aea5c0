// Campaigns: the list on the front page (with counts aggregated in SQL) and one campaign's header.
import type { Db } from '../../db/client';
import { one, rows } from './run-query';

export interface CampaignRow {
  id: string;
  created_at: Date;
  production_checkpoint_id: string | null;
  metric: string;
  mode: 'min' | 'max';
  inner_loops: number;
  /** Experiments, the untrained baselines (one per inner loop) not counted. */
  experiments: number;
  baselines: number;
  running: number;
  outer_iterations: number;
  last_outer_status: string | null;
  /** The spec set `trainer.unsandboxed`: its trainer runs without the filesystem and network sandbox. */
  unsandboxed: boolean;
}

/** The line every page and report shows beside an unsandboxed campaign. */
export const UNSANDBOXED_NOTE =
  "unsandboxed: this campaign's trainer runs without the filesystem and network sandbox (trainer.unsandboxed)";

const COLUMNS = `c.id, c.created_at, c.production_checkpoint_id,
  coalesce(c.spec->'selection'->>'metric', 'bits_per_byte') AS metric, coalesce(c.spec->'selection'->>'mode', 'min') AS mode,
  (SELECT count(*)::int FROM inner_loops l WHERE l.campaign_id = c.id) AS inner_loops,
  (SELECT count(*)::int FROM experiments e WHERE e.campaign_id = c.id AND e.proposer <> 'baseline') AS experiments,
  (SELECT count(*)::int FROM experiments e WHERE e.campaign_id = c.id AND e.proposer = 'baseline') AS baselines,
  (SELECT count(*)::int FROM experiments e WHERE e.campaign_id = c.id AND e.status = 'running') AS running,
  (SELECT count(*)::int FROM outer_iterations o WHERE o.campaign_id = c.id) AS outer_iterations,
  (SELECT o.status FROM outer_iterations o WHERE o.campaign_id = c.id ORDER BY o.iteration DESC, o.attempt DESC LIMIT 1) AS last_outer_status,
  coalesce((c.spec->'trainer'->>'unsandboxed')::boolean, false) AS unsandboxed`;

export const listCampaigns = (db: Db, limit: number, offset: number): Promise<CampaignRow[]> =>
  rows<CampaignRow>(db, `SELECT ${COLUMNS} FROM campaigns c ORDER BY c.created_at DESC, c.id LIMIT $1 OFFSET $2`, [limit, offset]);

export const countCampaigns = async (db: Db): Promise<number> =>
  (await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM campaigns'))?.n ?? 0;

export const getCampaign = (db: Db, id: string): Promise<CampaignRow | undefined> =>
  one<CampaignRow>(db, `SELECT ${COLUMNS} FROM campaigns c WHERE c.id = $1`, [id]);
