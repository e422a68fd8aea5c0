// Starting a campaign's inner loop and finding it again: the CLI's two ways into a running workflow.
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { CampaignSpec } from '../core/spec';
import { taskQueue } from '../core/queues';
import { innerLoop } from '../workflows/inner-loop';
import { CampaignId, LoopKind } from '../workflows/search-attributes';
import type { Endpoints } from './endpoints';

/** `demo/inner/20261202-153000`: readable, sortable, unique per start. */
export function newInnerLoopId(campaignId: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${campaignId}/inner/${stamp}`;
}

/** The validated spec travels in the input, so the loop runs the spec the CLI checked. */
export async function startInnerLoopWorkflow(client: Client, e: Endpoints, spec: CampaignSpec, workflowId?: string): Promise<WorkflowHandle<typeof innerLoop>> {
  return client.workflow.start(innerLoop, {
    taskQueue: taskQueue('orchestration', e.taskQueuePrefix),
    workflowId: workflowId ?? newInnerLoopId(spec.name),
    args: [{ campaignId: spec.name, spec }],
    typedSearchAttributes: [
      { key: CampaignId, value: spec.name },
      { key: LoopKind, value: 'inner' },
    ],
  });
}

/** The most recently started inner loop of a campaign, or undefined. */
export async function latestInnerLoop(client: Client, campaignId: string): Promise<WorkflowHandle | undefined> {
  for await (const wf of client.workflow.list({ query: `CampaignId = "${campaignId.replace(/"/g, '')}" AND LoopKind = "inner"` })) {
    return client.workflow.getHandle(wf.workflowId);
  }
  return undefined;
}
