// failOuterIteration: the last write of an attempt that failed (or was cancelled): its row ends `failed` with the
// reason, so `outer_iterations` never says `running` for a workflow that is over, and the next start of the
// campaign makes a new attempt of the iteration (claim-iteration.ts). Only a running row changes: a retry, or an
// attempt that finished after all, is left as it is.
import { and, eq, sql } from 'drizzle-orm';
import { outerIterations } from '../../db/schema';
import type { ActivityDeps } from '../deps';
import type { FailIterationInput } from '../../contracts/outer-activities';
import type { FailedIterationSummary } from '../../contracts/outer-loop';

export async function failOuterIteration(deps: ActivityDeps, input: FailIterationInput): Promise<void> {
  const [row] = await deps.db.select().from(outerIterations).where(eq(outerIterations.id, input.outerIterationId));
  if (!row) return;
  const summary: FailedIterationSummary = {
    outerIterationId: row.id,
    iteration: row.iteration,
    attempt: row.attempt,
    status: 'failed',
    reason: input.reason,
    newFeedback: row.newFeedback,
    critiques: 0,
    innerLoopId: input.innerLoopId ?? row.innerLoopId ?? undefined,
  };
  await deps.db
    .update(outerIterations)
    .set({
      status: 'failed',
      summary,
      innerLoopId: summary.innerLoopId ?? null,
      finishedAt: sql`coalesce(${outerIterations.finishedAt}, now())`,
    })
    .where(and(eq(outerIterations.id, input.outerIterationId), eq(outerIterations.status, 'running')));
}
