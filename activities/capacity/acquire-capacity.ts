// acquireCapacity: waits, inside the activity, until the campaign's and the backend's limits allow one more job,
// then grants the run a slot. No workflow timer or poll loop: the workflow sees one activity. The wait LISTENs
// on PostgreSQL (a dedicated client) and wakes on each release's NOTIFY, re-checking every fallbackMs in case a
// notification was missed; it heartbeats, so a cancel reaches it and a crashed worker's wait is retried elsewhere. A
// grant after a wait is first checked against a cancel Temporal holds but has not delivered yet.
import { Context } from '@temporalio/activity';
import { NotFoundError } from '../../core/errors';
import { listenForReleases, releaseSlot, suspectSlots, tryAcquireSlot, type SlotRequest } from '../../services/capacity';
import { experimentRef, type ExperimentRef } from '../../services/experiments';
import { campaignOfRow } from '../campaign-of';
import { withDefaults, type ActivityDeps } from '../deps';
import { runIdOf } from '../../contracts/run-id';
import type { AcquireCapacityInput, CapacityGrant } from '../../contracts/training';

/** The waiting loop's timing (tests shorten it). */
export const capacityTiming = {
  /** The bounded re-check while waiting, and the heartbeat cadence. */
  fallbackMs: 2000,
  /** A slot held this long by a workflow that no longer runs is freed (its release can never come). */
  staleAfterSeconds: 30,
  /** How often a waiting acquire asks Temporal whether the holders' workflows still run. */
  livenessEveryMs: 30_000,
};

export async function acquireCapacity(deps: ActivityDeps, input: AcquireCapacityInput): Promise<CapacityGrant> {
  const exp = await experimentRef(deps.db, input.experimentId);
  if (!exp) throw new NotFoundError(`experiment "${input.experimentId}" does not exist`);
  return (await acquireSlotOf(deps, input, exp)).grant;
}

/**
 * The slot of `exp`'s run (the experiment as its caller read it: runTraining reads it with the launch's inputs), and
 * whether it was granted at the first try: a caller that read anything before may trust it only then.
 */
export async function acquireSlotOf(
  deps: ActivityDeps,
  input: AcquireCapacityInput,
  exp: ExperimentRef,
): Promise<{ grant: CapacityGrant; firstTry: boolean }> {
  const ctx = Context.current();
  const { db, clock } = withDefaults(deps);
  const spec = await campaignOfRow(deps, exp);
  const runId = runIdOf(input.experimentId, input.attempt);
  const since = ctx.info.scheduledTimestampMs;
  const request = (): SlotRequest => ({
    runId,
    experimentId: input.experimentId,
    campaignId: exp.campaignId,
    backend: spec.backend.kind,
    campaignLimit: spec.backend.maxConcurrent,
    waitedSeconds: Math.max(0, (clock.now() - since) / 1000),
  });

  let answer = await tryAcquireSlot(db, request());
  if (answer.granted) return { grant: { runId, waitedSeconds: answer.waitedSeconds }, firstTry: true };

  // LISTEN before the next try, so a release between that try and the wait cannot be missed.
  let wake: () => void = () => undefined;
  // A lost connection wakes it too: the fallback re-check carries on.
  const listener = await listenForReleases(db, () => wake());
  try {
    let livenessAt = 0;
    for (;;) {
      const woken = new Promise<void>((resolve) => (wake = resolve));
      answer = await tryAcquireSlot(db, request());
      if (answer.granted) {
        if (await cancelRequested(deps)) {
          // Granted after its workflow was cancelled (a cancelled loop frees its running experiment's slot, and this
          // waiter takes it). The cancel itself reaches this activity only with its next heartbeat, seconds away
          // (the SDK throttles them), and a launch now would start a job nobody wants: free the slot, await it.
          await releaseSlot(db, runId);
          ctx.heartbeat({ waiting: answer });
          await ctx.cancelled;
        }
        return { grant: { runId, waitedSeconds: answer.waitedSeconds }, firstTry: false };
      }
      ctx.heartbeat({ waiting: answer });
      if (clock.now() - livenessAt >= capacityTiming.livenessEveryMs) {
        livenessAt = clock.now();
        await reapGoneHolders(deps, spec.backend.kind);
      }
      // ctx.sleep rejects with CancelledFailure on a cancel request or a worker shutdown: the wait ends, holding nothing.
      await Promise.race([woken, ctx.sleep(capacityTiming.fallbackMs)]);
    }
  } finally {
    await listener.close();
  }
}

/** Whether Temporal holds a cancel request for this activity that has not reached it yet (false when it cannot say). */
async function cancelRequested(deps: ActivityDeps): Promise<boolean> {
  const { workflowExecution, activityId } = Context.current().info;
  if (!deps.activityCancelRequested || !workflowExecution) return false;
  try {
    return await deps.activityCancelRequested(workflowExecution.workflowId, activityId);
  } catch {
    return false; // Temporal unreachable: the heartbeat will bring the cancel, as before
  }
}

/** Frees slots whose experiment workflow has ended without releasing them (terminated, say). */
async function reapGoneHolders(deps: ActivityDeps, backend: string): Promise<void> {
  if (!deps.isWorkflowRunning) return;
  for (const s of await suspectSlots(deps.db, backend, capacityTiming.staleAfterSeconds)) {
    if (!(await holderRunning(deps, s))) await releaseSlot(deps.db, s.runId);
  }
}

/**
 * Whether the workflow that holds a slot still runs: the experiment's own workflow, or its inner loop's when the
 * experiment has none (it ran inline, innerLoop.experimentWorkflows). A child that ended is gone whatever its loop
 * does. Without `workflowStatus` (which tells an ended child from none) the loop's liveness keeps the slot too: a
 * slot freed late costs a wait, one freed under a running trainer would over-grant.
 */
async function holderRunning(deps: ActivityDeps, s: { experimentId: string; innerLoopId: string | null }): Promise<boolean> {
  const running = deps.isWorkflowRunning!;
  if (!deps.workflowStatus) return (await running(s.experimentId)) || (s.innerLoopId !== null && (await running(s.innerLoopId)));
  const status = await deps.workflowStatus(s.experimentId);
  if (status !== 'NOT_FOUND' || s.innerLoopId === null) return status === 'RUNNING';
  return (await deps.workflowStatus(s.innerLoopId)) === 'RUNNING';
}
