// An activity failure that retrying cannot change is not retried: a non-retryable Flywheel error class fails its
// activity on the first attempt (activities/retry-boundary.ts marks it), with no list of error names in the workflows.
import { execFileSync } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { temporalAddress } from '../helpers/env';
import { campaignVersionOfLoop } from '../../services/queries/inner-loops';
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

/**
 * Starts `type` through the stock `temporal` CLI, as docs/operations.md tells a researcher to, with `input` as typed;
 * the workflow's result or its failure (type and message), and how many workflow tasks failed on the way.
 */
async function startFromCli(type: string, taskQueue: string, workflowId: string, input: unknown) {
  execFileSync(
    process.env.TEMPORAL_CLI_PATH!,
    [
      'workflow',
      'start',
      '--address',
      temporalAddress(),
      '--type',
      type,
      '--task-queue',
      taskQueue,
      '--workflow-id',
      workflowId,
      '--input',
      JSON.stringify(input),
    ],
    { stdio: 'pipe' },
  );
  const handle = harness.client.workflow.getHandle(workflowId);
  const outcome: { result?: unknown; failure?: { type?: string; message?: string; nonRetryable?: boolean } } = await handle.result().then(
    (result: unknown) => ({ result }),
    (e: unknown) => {
      const cause = (e as { cause?: { type?: string; message?: string; nonRetryable?: boolean } }).cause;
      return { failure: { type: cause?.type, message: cause?.message, nonRetryable: cause?.nonRetryable } };
    },
  );
  const events = (await handle.fetchHistory()).events ?? [];
  return { ...outcome, failedTasks: events.filter((e) => e.workflowTaskFailedEventAttributes).length };
}

describe('a loop started from the temporal CLI with the documented input', () => {
  test('innerLoop runs from a campaign name and from a spec; a wrong input fails once, in one line', async () => {
    const workers = await harness.workers('t-cli-start');
    try {
      const queue = `${workers.prefix}-orchestration`;
      const name = uniqueName('byname');
      const spec = fixtureSpec(name, { lr: 0.01 }, { budget: { experiments: 1, parallelism: 1 } });
      const versionId = await harness.version(spec);
      const byName = await startFromCli('innerLoop', queue, `${name}/inner/cli`, { campaignId: name });
      expect(byName).toMatchObject({ failedTasks: 0, result: { experiments: 1 } });
      expect(await campaignVersionOfLoop(harness.db.db, `${name}/inner/cli`)).toBe(versionId);

      const fresh = uniqueName('byspec');
      const bySpec = await startFromCli('innerLoop', queue, `${fresh}/inner/cli`, { spec: fixtureSpec(fresh, { lr: 0.01 }) });
      expect(bySpec).toMatchObject({ failedTasks: 0, result: { experiments: 1 } });
      expect(await campaignVersionOfLoop(harness.db.db, `${fresh}/inner/cli`)).toMatch(new RegExp(`^${fresh}@`));

      const wrong = await startFromCli('innerLoop', queue, `${fresh}/inner/wrong`, { campaign: name, budget: { experiment: 2 } });
      expect(wrong.failedTasks).toBe(0);
      expect(wrong.failure).toEqual({
        type: 'InvalidLoopInput',
        nonRetryable: true,
        message:
          'innerLoop input: unknown field "campaign" (did you mean "campaignVersionId"?); it names no campaign; "budget" has an unknown field "experiment" (did you mean "experiments"?); expected {"campaignId": "NAME"} (its newest version), {"campaignVersionId": "NAME@HASH"}, or {"spec": {"name": "NAME", …}}',
      });
      const unknown = await startFromCli('innerLoop', queue, `${fresh}/inner/unknown`, { campaignId: 'no-such-campaign' });
      expect(unknown).toMatchObject({ failedTasks: 0, failure: { type: 'NotFoundError', nonRetryable: true } });
      expect(unknown.failure?.message).toContain('unknown campaign "no-such-campaign"');

      const outer = await startFromCli('outerLoop', queue, `${fresh}/outer/wrong`, { campaignId: fresh, iterations: 0 });
      expect(outer).toMatchObject({
        failedTasks: 0,
        failure: { type: 'InvalidLoopInput', message: expect.stringContaining('"iterations" must be a whole number ≥ 1') },
      });
    } finally {
      await workers.stop();
    }
  });
});
