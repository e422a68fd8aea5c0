// Gate and selection decisions with their rule and figures, newest first.
import type { Db } from '../../db/client';
import { one, rows } from './run-query';

export interface DecisionRow {
  id: string;
  kind: string;
  checkpoint_id: string | null;
  experiment_id: string | null;
  rule: string;
  reason: string;
  figures: Record<string, unknown>;
  accepted: boolean;
  created_at: Date;
}

export const decisionsOf = (db: Db, campaignId: string, limit: number, offset: number): Promise<DecisionRow[]> =>
  rows<DecisionRow>(
    db,
    'SELECT id, kind, checkpoint_id, experiment_id, rule, reason, figures, accepted, created_at FROM decisions WHERE campaign_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3',
    [campaignId, limit, offset],
  );

export const countDecisions = async (db: Db, campaignId: string): Promise<number> =>
  (await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM decisions WHERE campaign_id = $1', [campaignId]))?.n ?? 0;

/** The promotion gate's decisions (promote, reject, hold) of a campaign, oldest first, with every check's figures. */
export const gateDecisionsOf = (db: Db, campaignId: string): Promise<DecisionRow[]> =>
  rows<DecisionRow>(
    db,
    "SELECT id, kind, checkpoint_id, experiment_id, rule, reason, figures, accepted, created_at FROM decisions WHERE campaign_id = $1 AND kind IN ('promote', 'reject', 'hold') AND figures ? 'checks' ORDER BY created_at, id",
    [campaignId],
  );

/** Decisions that name an experiment (its selection, its gate). */
export const decisionsOfExperiment = (db: Db, experimentId: string): Promise<DecisionRow[]> =>
  rows<DecisionRow>(
    db,
    'SELECT id, kind, checkpoint_id, experiment_id, rule, reason, figures, accepted, created_at FROM decisions WHERE experiment_id = $1 ORDER BY created_at',
    [experimentId],
  );
