// What scoring a checkpoint reads of a suite: its items of a public split (public, probe: held-out items come only
// through the logged read, heldout-items.ts; its settings come with the checkpoint, services/scoring-records.ts);
// what the outer loop reads to judge checkpoints: the items' ids, graders and categories of any split, never
// held-out text, and the public items a teacher critiques.
import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import type { EvalSplit } from '../../contracts/eval';
import { evalItems } from '../../db/schema';
import type { Queryable } from '../queryable';

export type EvalItem = typeof evalItems.$inferSelect;

/** The suite's items of `split`; never held-out ones (readHeldoutItems logs each held-out read). */
export async function splitItems(q: Queryable, suiteId: string, split: 'public' | 'probe'): Promise<EvalItem[]> {
  return q
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, split)));
}

/**
 * The suite's items of `splits`: ids, splits, graders, categories, probe kinds and source file names, and the
 * reference's length in UTF-8 bytes (a number: the weight of a loss item in bits per byte), never their text.
 */
export async function itemCategories(
  q: Queryable,
  suiteId: string,
  splits: readonly EvalSplit[],
): Promise<(Pick<EvalItem, 'id' | 'split' | 'grader' | 'category' | 'probe' | 'sourceFile'> & { referenceBytes: number })[]> {
  return q
    .select({
      id: evalItems.id,
      split: evalItems.split,
      grader: evalItems.grader,
      category: evalItems.category,
      probe: evalItems.probe,
      sourceFile: evalItems.sourceFile,
      referenceBytes: sql<number>`octet_length(${evalItems.reference})`.mapWith(Number),
    })
    .from(evalItems)
    .where(
      and(eq(evalItems.suiteId, suiteId), splits.length === 1 ? eq(evalItems.split, splits[0]) : inArray(evalItems.split, [...splits])),
    );
}

/** The suite's public items among `ids` that a teacher can critique (every grader but loss), whole. */
export async function publicItemsToCritique(q: Queryable, suiteId: string, ids: string[]): Promise<EvalItem[]> {
  return q
    .select()
    .from(evalItems)
    .where(
      and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'public'), ne(evalItems.grader, 'bits_per_byte'), inArray(evalItems.id, ids)),
    );
}
