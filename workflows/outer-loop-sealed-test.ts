// The sealed test split, for the record: once an iteration promotes, the new production model is scored on the test
// split, and so is the checkpoint it replaces (the first time, the untrained baseline or the production model from
// before the split existed; later, the previous production model, whose score is already recorded), so a report has
// a before and an after. No step of the loop reads these scores: they go into the iteration's summary, which only
// reports read (`flywheel report`, `flywheel status`, the dashboard, `demo --outer`).
import { isCancellation, patched } from '@temporalio/workflow';
import { failureReason } from '../contracts/failure-reason';
import type { OuterIterationSummary } from '../contracts/outer-loop';
import type { Gated } from './outer-loop-gate';
import type { OuterIteration, OuterLoopRuntime } from './outer-loop-runtime';

/** Executions started before the sealed test split score nothing on it. */
export const SEALED_TEST_PATCH = 'sealed-test-report';

/** Scores the promoted candidate and the checkpoint it replaces on the test split; the summary gains `test`. */
export async function scoreSealedTest(
  loop: OuterLoopRuntime,
  it: OuterIteration,
  summary: OuterIterationSummary,
  gated: Gated,
): Promise<void> {
  if (!patched(SEALED_TEST_PATCH)) return;
  const { metric } = it.settings.gate;
  const score = (checkpointId: string) =>
    loop.ev.scoreCheckpoint({ checkpointId, suiteId: it.task.suiteId, split: 'test', purpose: 'report' });
  try {
    const before = await score(gated.against);
    // A suite without a test split: nothing to report.
    if (before.itemCount === 0) return;
    const after = await score(gated.candidate);
    summary.test = { metric, items: after.itemCount, production: after.metrics[metric], before: before.metrics[metric] };
  } catch (e) {
    // A figure for the record never holds up a promotion the gate made: the summary says why it is missing.
    if (isCancellation(e)) throw e;
    summary.test = { metric, error: failureReason(e) };
  }
}
