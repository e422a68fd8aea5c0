// A campaign's outer iterations, with the held-out figures their summaries carry (the production score over time).
import type { Db } from '../../db/client';
import { one, rows } from './run-query';

export interface OuterIterationRow {
  id: string;
  iteration: number;
  workflow_id: string;
  trigger: string;
  status: string;
  new_feedback: number;
  dataset_version_id: string | null;
  inner_loop_id: string | null;
  candidate_checkpoint_id: string | null;
  decision_id: string | null;
  reason: string | null;
  heldout_metric: string | null;
  heldout_candidate: number | null;
  heldout_incumbent: number | null;
  heldout_production: number | null;
  /** The inner loop winner's public score (the selection metric). */
  inner_best_public: number | null;
  created_at: Date;
  finished_at: Date | null;
}

export const outerIterationsOf = (db: Db, campaignId: string): Promise<OuterIterationRow[]> =>
  rows<OuterIterationRow>(
    db,
    `SELECT id, iteration, workflow_id, trigger, status, new_feedback, dataset_version_id, inner_loop_id, candidate_checkpoint_id,
       decision_id, summary->>'reason' AS reason, summary->'heldout'->>'metric' AS heldout_metric,
       (summary->'heldout'->>'candidate')::float8 AS heldout_candidate, (summary->'heldout'->>'incumbent')::float8 AS heldout_incumbent,
       (summary->'heldout'->>'production')::float8 AS heldout_production, created_at, finished_at,
       (SELECT (l.summary->'best'->>'publicScore')::float8 FROM inner_loops l WHERE l.id = o.inner_loop_id) AS inner_best_public
     FROM outer_iterations o WHERE campaign_id = $1 ORDER BY iteration, attempt`,
    [campaignId],
  );

/** How many outer iterations (attempts included) a campaign has recorded. */
export const countOuterIterations = async (db: Db, campaignId: string): Promise<number> =>
  (await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM outer_iterations WHERE campaign_id = $1', [campaignId]))?.n ?? 0;
