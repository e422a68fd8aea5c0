// The one way held-out items leave the database: every read is logged with its reader and purpose first.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { evalItems, heldoutReads } from '../../db/schema';

export async function readHeldoutItems(
  db: Db,
  suiteId: string,
  reader: string,
  purpose: string,
): Promise<(typeof evalItems.$inferSelect)[]> {
  await db.insert(heldoutReads).values({ suiteId, reader, purpose });
  return db
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'heldout')));
}
