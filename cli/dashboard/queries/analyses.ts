// The agent's analyses, when the agents' migration has added an `analyses` table: read defensively (whatever its
// columns are), newest first, so the dashboard works with or without it.
import type { Db } from '../../../db/client';
import { rows, tableExists } from './run-query';

/** undefined: no such table in this database. */
export async function analysesOf(db: Db, campaignId: string, limit = 50): Promise<Record<string, unknown>[] | undefined> {
  if (!(await tableExists(db, 'analyses'))) return undefined;
  const cols = await rows<{ column_name: string }>(db, "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'analyses'");
  const names = new Set(cols.map((c) => c.column_name));
  if (!names.has('campaign_id')) return undefined;
  const order = names.has('created_at') ? 'ORDER BY created_at DESC' : '';
  return rows<Record<string, unknown>>(db, `SELECT * FROM analyses WHERE campaign_id = $1 ${order} LIMIT $2`, [campaignId, limit]);
}
