// Whether a workflow execution is still running, for activities that must not take over a live owner's work
// (the outer loop's claim). Uses the worker's own connection: no second channel to Temporal.
import { Client, WorkflowNotFoundError, type ConnectionLike } from '@temporalio/client';

export function workflowLiveness(connection: ConnectionLike, namespace?: string): (workflowId: string) => Promise<boolean> {
  const client = new Client({ connection, namespace });
  return async (workflowId) => {
    try {
      return (await client.workflow.getHandle(workflowId).describe()).status.name === 'RUNNING';
    } catch (e) {
      if (e instanceof WorkflowNotFoundError) return false;
      throw e;
    }
  };
}
