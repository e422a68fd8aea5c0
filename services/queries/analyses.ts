// The agent's analyses of a campaign (written after each inner-loop batch, see activities/inner/analyze-batch.ts),
// newest first.
import type { Db } from '../../db/client';
import { rows } from './run-query';

export async function analysesOf(db: Db, campaignId: string, limit = 50): Promise<Record<string, unknown>[]> {
  return rows<Record<string, unknown>>(
    db,
    'SELECT created_at, inner_loop_id, start_index, author, text FROM analyses WHERE campaign_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
    [campaignId, limit],
  );
}
