// Whether a workflow execution is still running, for activities that must not take over a live owner's work
// (the outer loop's claim, capacity slots). Uses the worker's own connection: no second channel to Temporal.
import { Client, WorkflowNotFoundError, type ConnectionLike } from '@temporalio/client';

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
