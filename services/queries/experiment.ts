// One experiment: its row, its training attempts and its eval results.
import type { Db } from '../../db/client';
import { one, rows } from './run-query';
import type { LeaderboardRow } from './leaderboard';

export interface ExperimentRow extends LeaderboardRow {
  campaign_id: string;
  inner_loop_id: string;
  dataset_version_id: string;
  best_checkpoint_id: string | null;
  started_at: Date | null;
  finished_at: Date | null;
}

export const getExperiment = (db: Db, id: string): Promise<ExperimentRow | undefined> =>
  one<ExperimentRow>(
    db,
    `SELECT id, campaign_id, inner_loop_id, dataset_version_id, index, params, hypothesis, proposer, status, public_score, heldout_score,
       best_checkpoint_id, error, started_at, finished_at, capacity_wait_seconds AS capacity_wait_s,
       extract(epoch FROM (coalesce(finished_at, now()) - started_at))::float8 AS duration_s
     FROM experiments WHERE id = $1`,
    [id],
  );

export interface RunRow {
  id: string;
  attempt: number;
  backend: string;
  status: string;
  exit_code: number | null;
  trainer_seconds: number | null;
  capacity_wait_seconds: number | null;
  stderr_tail: string | null;
  started_at: Date;
  ended_at: Date | null;
}

export const runsOf = (db: Db, experimentId: string): Promise<RunRow[]> =>
  rows<RunRow>(
    db,
    'SELECT id, attempt, backend, status, exit_code, trainer_seconds, capacity_wait_seconds, stderr_tail, started_at, ended_at FROM training_runs WHERE experiment_id = $1 ORDER BY attempt',
    [experimentId],
  );

export interface EvalRow {
  suite_id: string;
  split: string;
  checkpoint_id: string;
  item_count: number;
  metrics: Record<string, number>;
}

export const evalsOf = (db: Db, experimentId: string): Promise<EvalRow[]> =>
  rows<EvalRow>(
    db,
    'SELECT suite_id, split, checkpoint_id, item_count, metrics FROM eval_results WHERE experiment_id = $1 ORDER BY suite_id, split',
    [experimentId],
  );
