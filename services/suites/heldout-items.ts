// The one way held-out items leave the database: every read is logged with its reader and purpose first.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { evalItems, heldoutReads } from '../../db/schema';
import type { Queryable } from '../queryable';

export async function readHeldoutItems(
  db: Db,
  suiteId: string,
  reader: string,
  purpose: string,
): Promise<(typeof evalItems.$inferSelect)[]> {
  await logHeldoutRead(db, suiteId, reader, purpose);
  return db
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'heldout')));
}

/** Logs a read of the suite's held-out items (ids, graders and categories count): who read them, and why. */
export async function logHeldoutRead(q: Queryable, suiteId: string, reader: string, purpose: string): Promise<void> {
  await q.insert(heldoutReads).values({ suiteId, reader, purpose });
}
