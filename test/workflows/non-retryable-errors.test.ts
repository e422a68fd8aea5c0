// An activity failure that retrying cannot change is not retried: a non-retryable Flywheel error class fails its
// activity on the first attempt (activities/retry-boundary.ts marks it), with no list of error names in the workflows.
import { temporal } from '@temporalio/proto';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;

beforeAll(async () => {
  harness = await loopHarness('nonretry');
});
afterAll(() => harness?.close());

/** How `activity` ended in `workflowId`'s history: the attempt that ended it, its failure type and its retry state. */
async function lastAttempt(workflowId: string, activity: string) {
  const events = (await harness.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity);
  if (!scheduled) throw new Error(`${workflowId} never scheduled ${activity}`);
  const id = String(scheduled.eventId);
  const started = events.find(
    (e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === id,
  )?.activityTaskStartedEventAttributes;
  const failed = events.find(
    (e) => String(e.activityTaskFailedEventAttributes?.scheduledEventId) === id,
  )?.activityTaskFailedEventAttributes;
  return {
    attempt: started?.attempt,
    type: failed?.failure?.applicationFailureInfo?.type,
    retryState: failed ? temporal.api.enums.v1.RetryState[failed.retryState ?? 0] : undefined,
  };
}

test('a checkpoint labelled charlm-v1 that is not one fails scoring on the first attempt (CheckpointFormatError)', async () => {
  const workers = await harness.workers('t-format');
  try {
    const id = uniqueName('format');
    const wf = `${id}/inner/1`;
    const h = await workers.startLoop(id, fixtureSpec(id, { claimCharlm: true }));
    await h.result().catch(() => undefined);
    expect(await lastAttempt(`${wf}/e0`, 'scoreCheckpoint')).toEqual({
      attempt: 1,
      type: 'CheckpointFormatError',
      retryState: 'RETRY_STATE_NON_RETRYABLE_FAILURE',
    });
  } finally {
    await workers.stop();
  }
});
