// What scoreCheckpoint reads and writes, one statement each (issue 38: a public scoring was seven round trips): the
// checkpoint with its experiment, the result already recorded and the suite's settings in one read; the result with
// the experiment's rank score in one write (a data-modifying WITH), so the two land together or not at all.
import { eq, sql } from 'drizzle-orm';
import type { SuiteSettings } from '../core/eval-suite/suite-schema';
import { checkpoints, evalResults, evalSuites, experiments } from '../db/schema';
import type { Checkpoint } from './checkpoints';
import type { EvalResult, NewEvalResult } from './eval-results';
import type { Experiment } from './experiments';
import type { Queryable } from './queryable';

export interface ScoringInputs {
  /** The result recorded under the id already, if any. */
  done?: EvalResult;
  ckpt?: Checkpoint;
  /** The checkpoint's experiment. */
  exp?: Experiment;
  /** The suite's settings; empty for an unknown suite. */
  settings: SuiteSettings;
}

/** Each part is read whether or not the others exist (one row always comes back). */
export async function scoringInputs(
  q: Queryable,
  ids: { resultId: string; checkpointId: string; suiteId: string },
): Promise<ScoringInputs> {
  const [row] = await q
    .select({ done: evalResults, ckpt: checkpoints, exp: experiments, settings: evalSuites.settings })
    .from(sql`(SELECT 1) AS one`)
    .leftJoin(evalResults, eq(evalResults.id, ids.resultId))
    .leftJoin(checkpoints, eq(checkpoints.id, ids.checkpointId))
    .leftJoin(experiments, eq(experiments.id, checkpoints.experimentId))
    .leftJoin(evalSuites, eq(evalSuites.id, ids.suiteId));
  return { done: row.done ?? undefined, ckpt: row.ckpt ?? undefined, exp: row.exp ?? undefined, settings: row.settings ?? {} };
}

/**
 * Records the result (the first write wins; `replace`: in place of the one under its id, for a result scored again
 * because the cached one cannot be compared with scores taken now) and, with `rank`, the experiment's public
 * (selection) or held-out (gate) score, in one statement; with `succeeded`, the experiment's success too (its best
 * checkpoint, the scored one; its first end time kept), as finishExperiment records it.
 */
export async function recordScore(
  q: Queryable,
  result: NewEvalResult,
  opts: { replace: boolean; rank?: { publicScore: number } | { heldoutScore: number }; succeeded?: boolean },
): Promise<void> {
  const ended = opts.succeeded
    ? {
        status: 'succeeded',
        bestCheckpointId: result.checkpointId,
        error: null,
        finishedAt: sql`coalesce(${experiments.finishedAt}, now())`,
      }
    : {};
  const set = { ...opts.rank, ...ended };
  const ranked =
    Object.keys(set).length > 0 &&
    q.$with('ranked').as(q.update(experiments).set(set).where(eq(experiments.id, result.experimentId)).returning({ id: experiments.id }));
  const insert = q
    .with(...(ranked ? [ranked] : []))
    .insert(evalResults)
    .values(result);
  const { id: _id, ...replaced } = result;
  await (opts.replace ? insert.onConflictDoUpdate({ target: evalResults.id, set: replaced }) : insert.onConflictDoNothing());
}
