// An inner loop's trials for its charts (history, slices, parallel coordinates, importance): index, params, status
// and public score, the untrained baseline apart. Capped at the most recent TRIALS, which the page says.
import type { Db } from '../../db/client';
import type { SearchSpace } from '../../core/spec';
import { one, rows } from './run-query';

export const TRIALS = 2000;

export async function trialsOf(
  db: Db,
  innerLoopId: string,
  limit = TRIALS,
): Promise<{ trials: TrialPoint[]; total: number; baseline: number | null }> {
  const [r, n, b] = await Promise.all([
    rows<{ index: number; params: Record<string, unknown>; status: string; score: number | null }>(
      db,
      `SELECT * FROM (SELECT index, params, status, public_score AS score FROM experiments WHERE inner_loop_id = $1 AND proposer <> 'baseline' ORDER BY index DESC LIMIT $2) t ORDER BY index`,
      [innerLoopId, limit],
    ),
    one<{ n: number }>(db, "SELECT count(*)::int AS n FROM experiments WHERE inner_loop_id = $1 AND proposer <> 'baseline'", [innerLoopId]),
    // The untrained baseline's public score, when a loop recorded one.
    one<{ score: number | null }>(
      db,
      "SELECT public_score AS score FROM experiments WHERE inner_loop_id = $1 AND proposer = 'baseline' LIMIT 1",
      [innerLoopId],
    ),
  ]);
  return { trials: r, total: n?.n ?? 0, baseline: b?.score ?? null };
}

/** The campaign's search space as its spec states it (empty when the spec has none). */
export async function searchSpaceOf(db: Db, campaignId: string): Promise<SearchSpace> {
  const r = await one<{ space: SearchSpace | null }>(db, "SELECT spec->'searchSpace' AS space FROM campaigns WHERE id = $1", [campaignId]);
  return r?.space ?? {};
}

export interface TrialPoint {
  index: number;
  params: Record<string, unknown>;
  status: string;
  score: number | null;
}
