// An inner loop's leaderboard: one page of experiments, best public score first, with duration and capacity wait
// computed in SQL; and the count per status for the page's header.
import type { Db } from '../../db/client';
import { rows } from './run-query';

export interface LeaderboardRow {
  id: string;
  index: number;
  params: Record<string, unknown>;
  hypothesis: string;
  proposer: string;
  status: string;
  public_score: number | null;
  heldout_score: number | null;
  duration_s: number | null;
  capacity_wait_s: number | null;
  error: string | null;
}

/** Rank order: the selection mode decides the direction; experiments without a score come last, by index. */
export function leaderboardPage(
  db: Db,
  innerLoopId: string,
  mode: 'min' | 'max',
  limit: number,
  offset: number,
): Promise<LeaderboardRow[]> {
  const dir = mode === 'max' ? 'DESC' : 'ASC';
  return rows<LeaderboardRow>(
    db,
    `SELECT id, index, params, hypothesis, proposer, status, public_score, heldout_score,
       extract(epoch FROM (coalesce(finished_at, now()) - started_at))::float8 AS duration_s, capacity_wait_seconds AS capacity_wait_s, error
     FROM experiments WHERE inner_loop_id = $1 ORDER BY public_score ${dir} NULLS LAST, index LIMIT $2 OFFSET $3`,
    [innerLoopId, limit, offset],
  );
}

export async function statusCounts(db: Db, innerLoopId: string): Promise<Record<string, number>> {
  const r = await rows<{ status: string; n: number }>(
    db,
    'SELECT status, count(*)::int AS n FROM experiments WHERE inner_loop_id = $1 GROUP BY status ORDER BY status',
    [innerLoopId],
  );
  return Object.fromEntries(r.map((x) => [x.status, x.n]));
}
