// failOuterIteration: the last write of an attempt that failed (or was cancelled): its row ends `failed` with the
// reason, so `outer_iterations` never says `running` for a workflow that is over, and the next start of the
// campaign makes a new attempt of the iteration (claim-iteration.ts). Only a running row changes: a retry, or an
// attempt that finished after all, is left as it is.
import type { ActivityDeps } from '../deps';
import type { FailIterationInput } from '../../contracts/outer-activities';
import type { FailedIterationSummary } from '../../contracts/outer-loop';
import { failRunningIteration, iterationById } from '../../services/outer-iterations';

export async function failOuterIteration(deps: ActivityDeps, input: FailIterationInput): Promise<void> {
  const row = await iterationById(deps.db, input.outerIterationId);
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
  await failRunningIteration(deps.db, input.outerIterationId, summary);
}
