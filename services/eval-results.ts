// Eval results: one row per (checkpoint, suite, split) scored (`${checkpointId}|${suiteId}|${split}`), with its
// metrics, per-item scores and what went wrong. scoreCheckpoint writes one once and returns it when asked again.
import { eq } from 'drizzle-orm';
import { evalResults } from '../db/schema';
import type { Queryable } from './queryable';

export type EvalResult = typeof evalResults.$inferSelect;
export type NewEvalResult = typeof evalResults.$inferInsert;

/** The id a checkpoint's score on one split of one suite is recorded under. */
export function evalResultIdOf(checkpointId: string, suiteId: string, split: string): string {
  return `${checkpointId}|${suiteId}|${split}`;
}

export async function evalResultById(q: Queryable, id: string): Promise<EvalResult | undefined> {
  const [row] = await q.select().from(evalResults).where(eq(evalResults.id, id));
  return row;
}

/** Records the result unless one is recorded under its id already (the first write wins). */
export async function recordEvalResult(q: Queryable, result: NewEvalResult): Promise<void> {
  await q.insert(evalResults).values(result).onConflictDoNothing();
}
