// The one way the sealed splits' items leave the database: every read of held-out or test items is logged with its
// reader, split and purpose first. The test split is read for reports only: no loop decision reads it.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { evalItems, heldoutReads } from '../../db/schema';
import { UsageError } from '../../core/errors';
import type { Queryable } from '../queryable';

/** The splits whose items are kept from everyone but the eval activity and the contamination checks. */
export type SealedSplit = 'heldout' | 'test';

/** Why the test split may be read: a report's figure, or the contamination checks' comparison with training text. */
export const TEST_READ_PURPOSES: readonly string[] = ['report', 'contamination'];

export type EvalItemRow = typeof evalItems.$inferSelect;

export function readHeldoutItems(db: Db, suiteId: string, reader: string, purpose: string): Promise<EvalItemRow[]> {
  return readSealedItems(db, suiteId, 'heldout', reader, purpose);
}

/**
 * The suite's items of a sealed split, after logging the read. A test read for any purpose but a report or the
 * contamination check is refused: a decision that read the test split would unseal it.
 */
export async function readSealedItems(
  db: Db,
  suiteId: string,
  split: SealedSplit,
  reader: string,
  purpose: string,
): Promise<EvalItemRow[]> {
  if (split === 'test' && !TEST_READ_PURPOSES.includes(purpose))
    throw new UsageError(`the sealed test split is read for reports only, not for "${purpose}" (reader ${reader})`);
  await logHeldoutRead(db, suiteId, reader, purpose, split);
  return db
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, split)));
}

/** Logs a read of the suite's sealed items (ids, graders and categories count): who read them, which split, and why. */
export async function logHeldoutRead(
  q: Queryable,
  suiteId: string,
  reader: string,
  purpose: string,
  split: SealedSplit = 'heldout',
): Promise<void> {
  await q.insert(heldoutReads).values({ suiteId, split, reader, purpose });
}
