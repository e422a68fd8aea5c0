// Eval results: one row per (checkpoint, suite, split) scored (`${checkpointId}|${suiteId}|${split}`), with its
// metrics, per-item scores and what went wrong. scoreCheckpoint writes one once and returns it when asked again; the
// outer loop reads per-item scores and details to judge checkpoints (the gate and its approval evidence, the seed
// reruns' reference, the dataset step's loss weights, the critique of public failures).
import { and, eq, inArray } from 'drizzle-orm';
import type { EvalSplit } from '../contracts/eval';
import { evalResults } from '../db/schema';
import type { Queryable } from './queryable';

export type EvalResult = typeof evalResults.$inferSelect;
export type NewEvalResult = typeof evalResults.$inferInsert;

/** The id a checkpoint's score on one split of one suite is recorded under. */
export function evalResultIdOf(checkpointId: string, suiteId: string, split: string): string {
  return `${checkpointId}|${suiteId}|${split}`;
}

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
    .where(eq(evalResults.id, evalResultIdOf(checkpointId, suiteId, split)));
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
    .where(eq(evalResults.id, evalResultIdOf(checkpointId, suiteId, split)));
  return row;
}

/** The per-item scores of each checkpoint of `checkpointIds` on each split of `splits` that is scored (in no order). */
export async function scoresOfCheckpoints(
  q: Queryable,
  suiteId: string,
  checkpointIds: readonly string[],
  splits: readonly EvalSplit[],
): Promise<{ checkpointId: string; split: string; perItem: Record<string, number> }[]> {
  const ids = checkpointIds.flatMap((c) => splits.map((s) => evalResultIdOf(c, suiteId, s)));
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
