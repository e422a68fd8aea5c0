// Whether a workflow execution is still running, for activities that must not take over a live owner's work
// (the outer loop's claim, capacity slots). Uses the worker's own connection: no second channel to Temporal.
import { Client, decodePendingActivityState, WorkflowNotFoundError, type ConnectionLike } from '@temporalio/client';

/** The execution's status name (`RUNNING`, `FAILED`, `TERMINATED`, …), or `NOT_FOUND`; the latest run without `runId`. */
export function workflowStatus(connection: ConnectionLike, namespace?: string): (workflowId: string, runId?: string) => Promise<string> {
  const client = new Client({ connection, namespace });
  return async (workflowId, runId) => {
    try {
      return (await client.workflow.getHandle(workflowId, runId).describe()).status.name;
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return 'NOT_FOUND';
      throw e;
    }
  };
}

export function workflowLiveness(connection: ConnectionLike, namespace?: string): (workflowId: string) => Promise<boolean> {
  const status = workflowStatus(connection, namespace);
  return async (workflowId) => (await status(workflowId)) === 'RUNNING';
}

/** Whether the execution's pending activity `activityId` has a cancel request (false once it is gone or the run ended). */
export function activityCancelRequested(
  connection: ConnectionLike,
  namespace?: string,
): (workflowId: string, activityId: string) => Promise<boolean> {
  const client = new Client({ connection, namespace });
  return async (workflowId, activityId) => {
    try {
      const { raw } = await client.workflow.getHandle(workflowId).describe();
      return (raw.pendingActivities ?? []).some(
        (a) => a.activityId === activityId && decodePendingActivityState(a.state) === 'CANCEL_REQUESTED',
      );
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return false;
      throw e;
    }
  };
}
