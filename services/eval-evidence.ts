// What the outer loop reads of checkpoints' eval results and of a suite's items to judge them: the promotion gate and
// its approval evidence, the seed reruns' reference, the dataset step's loss weights and the critique of public
// failures. Per-item scores, ids, graders and categories; item text only of the public split, and every held-out
// item list read is logged (heldout_reads) by the caller's purpose.
import { and, eq, inArray, ne } from 'drizzle-orm';
import { evalItems, evalResults, heldoutReads } from '../db/schema';
import type { Queryable } from './queryable';

export type EvalItemRow = typeof evalItems.$inferSelect;
export type EvalSplit = 'public' | 'heldout' | 'probe';

const resultIdOf = (checkpointId: string, suiteId: string, split: string) => `${checkpointId}|${suiteId}|${split}`;

/** A checkpoint's per-item scores on one split of a suite, and the experiment that made it; undefined when unscored. */
export async function splitScores(
  q: Queryable,
  checkpointId: string,
  suiteId: string,
  split: EvalSplit,
): Promise<{ perItem: Record<string, number>; experimentId: string } | undefined> {
  const [row] = await q
    .select({ perItem: evalResults.perItem, experimentId: evalResults.experimentId })
    .from(evalResults)
    .where(eq(evalResults.id, resultIdOf(checkpointId, suiteId, split)));
  return row;
}

/** A checkpoint's per-item scores on one split with what went wrong (canary hits among them); undefined when unscored. */
export async function splitResult(
  q: Queryable,
  checkpointId: string,
  suiteId: string,
  split: EvalSplit,
): Promise<Pick<typeof evalResults.$inferSelect, 'perItem' | 'details'> | undefined> {
  const [row] = await q
    .select({ perItem: evalResults.perItem, details: evalResults.details })
    .from(evalResults)
    .where(eq(evalResults.id, resultIdOf(checkpointId, suiteId, split)));
  return row;
}

/** The per-item scores of each checkpoint of `checkpointIds` on each split of `splits` that is scored (in no order). */
export async function scoresOfCheckpoints(
  q: Queryable,
  suiteId: string,
  checkpointIds: readonly string[],
  splits: readonly EvalSplit[],
): Promise<{ checkpointId: string; split: string; perItem: Record<string, number> }[]> {
  const ids = checkpointIds.flatMap((c) => splits.map((s) => resultIdOf(c, suiteId, s)));
  if (ids.length === 0) return [];
  return q
    .select({ checkpointId: evalResults.checkpointId, split: evalResults.split, perItem: evalResults.perItem })
    .from(evalResults)
    .where(inArray(evalResults.id, ids));
}

/** The details (canary and held-out canary hits) of every split of the suite the checkpoint was scored on. */
export async function resultDetailsOf(
  q: Queryable,
  checkpointId: string,
  suiteId: string,
): Promise<(typeof evalResults.$inferSelect)['details'][]> {
  const rows = await q
    .select({ details: evalResults.details })
    .from(evalResults)
    .where(and(eq(evalResults.checkpointId, checkpointId), eq(evalResults.suiteId, suiteId)));
  return rows.map((r) => r.details);
}

/** The suite's items of `splits`: ids, splits, graders, categories and probe kinds, never their text. */
export async function itemCategories(
  q: Queryable,
  suiteId: string,
  splits: readonly EvalSplit[],
): Promise<Pick<EvalItemRow, 'id' | 'split' | 'grader' | 'category' | 'probe'>[]> {
  return q
    .select({ id: evalItems.id, split: evalItems.split, grader: evalItems.grader, category: evalItems.category, probe: evalItems.probe })
    .from(evalItems)
    .where(
      and(eq(evalItems.suiteId, suiteId), splits.length === 1 ? eq(evalItems.split, splits[0]) : inArray(evalItems.split, [...splits])),
    );
}

/** Logs a read of the suite's held-out items (ids, graders and categories count): who read them, and why. */
export async function logHeldoutRead(q: Queryable, suiteId: string, reader: string, purpose: string): Promise<void> {
  await q.insert(heldoutReads).values({ suiteId, reader, purpose });
}

/** The suite's public items among `ids` that a teacher can critique (every grader but loss), whole. */
export async function publicItemsToCritique(q: Queryable, suiteId: string, ids: string[]): Promise<EvalItemRow[]> {
  return q
    .select()
    .from(evalItems)
    .where(
      and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'public'), ne(evalItems.grader, 'bits_per_byte'), inArray(evalItems.id, ids)),
    );
}
