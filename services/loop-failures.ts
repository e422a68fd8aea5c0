// Why a campaign's loop ended without completing, read from Temporal: the loop's workflow failure, in one line
// (contracts/failure-reason.ts). A loop refused before its first write (the trainer check) has no row to hold a
// reason, so `flywheel status`, `flywheel run` and the dashboard all ask the workflow itself.
import { WorkflowFailedError, type Client, type WorkflowHandle } from '@temporalio/client';
import { failureReason } from '../contracts/failure-reason';
import { CampaignId, LoopKind } from '../contracts/search-attributes';

/** The one-line reason of a failed (terminated, cancelled, timed-out) workflow's error from `handle.result()`. */
export function endReason(e: WorkflowFailedError): string {
  return e.cause ? failureReason(e.cause) : e.message;
}

/** Why the workflow ended without completing, or undefined when it completed. Ask only once it has ended: it waits. */
export async function loopEndReason(handle: WorkflowHandle): Promise<string | undefined> {
  try {
    await handle.result();
    return undefined;
  } catch (e) {
    if (e instanceof WorkflowFailedError) return endReason(e);
    throw e;
  }
}

export interface EndedLoop {
  workflowId: string;
  campaignId: string;
  kind: string;
  /** Temporal's execution status: FAILED, TERMINATED, CANCELLED or TIMED_OUT. */
  status: string;
  closedAt?: Date;
  reason: string;
}

export interface FailedLoopsOptions {
  /** Only this campaign's loops. @default every campaign's */
  campaignId?: string;
  /** Only loops on this task queue (a stack's orchestration queue). @default any */
  taskQueue?: string;
  /** @default 10 */
  limit?: number;
}

/** The latest loops (inner and outer) that ended without completing, newest first. */
export async function failedLoops(client: Client, opts: FailedLoopsOptions = {}): Promise<EndedLoop[]> {
  const quote = (v: string) => `"${v.replace(/"/g, '')}"`;
  const query = [
    '(LoopKind = "inner" OR LoopKind = "outer") AND ExecutionStatus IN ("Failed", "Terminated", "Canceled", "TimedOut")',
    ...(opts.campaignId === undefined ? [] : [`CampaignId = ${quote(opts.campaignId)}`]),
    ...(opts.taskQueue === undefined ? [] : [`TaskQueue = ${quote(opts.taskQueue)}`]),
  ].join(' AND ');
  const ended = [];
  for await (const wf of client.workflow.list({ query })) {
    ended.push(wf);
    if (ended.length >= (opts.limit ?? 10)) break;
  }
  return Promise.all(
    ended.map(async (wf) => ({
      workflowId: wf.workflowId,
      campaignId: wf.typedSearchAttributes.get(CampaignId) ?? '',
      kind: wf.typedSearchAttributes.get(LoopKind) ?? '',
      status: wf.status.name,
      closedAt: wf.closeTime,
      reason: (await loopEndReason(client.workflow.getHandle(wf.workflowId, wf.runId))) ?? '',
    })),
  );
}
