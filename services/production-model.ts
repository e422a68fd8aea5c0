// A campaign's production model: which checkpoint it is, and that checkpoint's row (format, path, sha256).
import { eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { campaigns, checkpoints } from '../db/schema';

export type CheckpointRow = typeof checkpoints.$inferSelect;

/** The campaign's production checkpoint id: null before the first promotion, undefined for an unknown campaign. */
export async function productionCheckpointOf(db: Db, campaignId: string): Promise<string | null | undefined> {
  const [c] = await db.select({ production: campaigns.productionCheckpointId }).from(campaigns).where(eq(campaigns.id, campaignId));
  return c === undefined ? undefined : c.production;
}

export async function checkpointRow(db: Db, checkpointId: string): Promise<CheckpointRow | undefined> {
  const [row] = await db.select().from(checkpoints).where(eq(checkpoints.id, checkpointId));
  return row;
}
