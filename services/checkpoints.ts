// Checkpoints: one row per verified checkpoint a succeeded run's manifest lists (`${runId}/step-${step}`), frozen on
// disk before it is recorded. awaitTraining records them; the eval and the outer loop read them by id.
import { eq } from 'drizzle-orm';
import { checkpoints } from '../db/schema';
import type { Queryable } from './queryable';

export type Checkpoint = typeof checkpoints.$inferSelect;
export type NewCheckpoint = typeof checkpoints.$inferInsert;

/** The checkpoint's row (path, sha256, format, its run and experiment), or undefined. */
export async function checkpointById(q: Queryable, id: string): Promise<Checkpoint | undefined> {
  const [row] = await q.select().from(checkpoints).where(eq(checkpoints.id, id));
  return row;
}

/** Records a run's checkpoints; one recorded already (a retried awaitTraining) is left as it is. */
export async function recordCheckpoints(q: Queryable, rows: NewCheckpoint[]): Promise<void> {
  if (rows.length === 0) return;
  await q.insert(checkpoints).values(rows).onConflictDoNothing();
}
