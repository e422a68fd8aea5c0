// One line on why a workflow or one of its steps failed, for the rows a failed attempt ends with and for a loop that
// ended without completing (`flywheel status`, `flywheel run`, the dashboard): where it failed (the child workflow or
// activity) and the innermost cause's message, which is the one a researcher can act on.
import { ActivityFailure, ChildWorkflowFailure, isCancellation } from '@temporalio/workflow';

export function failureReason(e: unknown): string {
  if (isCancellation(e)) return 'cancelled';
  let leaf: unknown = e;
  while (leaf instanceof Error && leaf.cause instanceof Error) leaf = leaf.cause;
  const message = leaf instanceof Error ? leaf.message : String(leaf);
  if (e instanceof ChildWorkflowFailure) return `${e.workflowType} ${e.execution.workflowId} failed: ${message}`;
  if (e instanceof ActivityFailure) return `${e.activityType} failed: ${message}`;
  return message;
}
