// Starting a campaign's loops and finding them again, by workflow type name (neither the CLI nor the servers load
// workflow code): the two ways into a running workflow.
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Workflow } from '@temporalio/common';
import { campaignIdOfVersion } from '../contracts/campaign';
import { taskQueue } from '../contracts/queues';
import type { InnerLoopInput, InnerLoopResult } from '../contracts/inner-loop';
import type { OuterLoopInput, OuterLoopResult } from '../contracts/outer-loop';
import { CampaignId, LoopKind } from '../contracts/search-attributes';

/** The workflow type the outer loop is registered under (by name: the CLI does not load its code). */
export const OUTER_LOOP_TYPE = 'outerLoop';
export const INNER_LOOP_TYPE = 'innerLoop';
export type InnerLoopWorkflow = (input: InnerLoopInput) => Promise<InnerLoopResult>;
export type OuterLoopWorkflow = (input: OuterLoopInput) => Promise<OuterLoopResult>;

/** Where loops are started: the stack's task-queue prefix. */
export interface LoopQueues {
  taskQueuePrefix: string;
}

/** `20261202-153000`: readable, sortable, unique per start (to the second). */
export function loopStamp(now = new Date()): string {
  return now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** `demo/inner/20261202-153000` */
export function newInnerLoopId(campaignId: string, now = new Date()): string {
  return `${campaignId}/inner/${loopStamp(now)}`;
}

/** `demo/outer/20261202-153000` (a Schedule's runs are `demo/outer/scheduled-<fire time>`). */
export function newOuterLoopId(campaignId: string, now = new Date()): string {
  return `${campaignId}/outer/${loopStamp(now)}`;
}

/** The search attributes every loop of a campaign carries, so the UI and `latest…Loop` can find it. */
export function loopSearchAttributes(campaignId: string, kind: 'inner' | 'outer') {
  return [
    { key: CampaignId, value: campaignId },
    { key: LoopKind, value: kind },
  ];
}

/**
 * Starts an inner loop on a registered campaign version (registerCampaignVersion): the input carries its id, never
 * the spec, so the loop runs exactly that version and an edited spec (a new version) never reaches it.
 */
export async function startInnerLoopWorkflow(
  client: Client,
  e: LoopQueues,
  campaignVersionId: string,
  workflowId?: string,
): Promise<WorkflowHandle<InnerLoopWorkflow>> {
  const campaignId = campaignIdOfVersion(campaignVersionId);
  return client.workflow.start<InnerLoopWorkflow>(INNER_LOOP_TYPE, {
    taskQueue: taskQueue('orchestration', e.taskQueuePrefix),
    workflowId: workflowId ?? newInnerLoopId(campaignId),
    args: [{ campaignVersionId }],
    typedSearchAttributes: loopSearchAttributes(campaignId, 'inner'),
  });
}

export async function startOuterLoopWorkflow(
  client: Client,
  e: LoopQueues,
  input: OuterLoopInput,
): Promise<WorkflowHandle<OuterLoopWorkflow>> {
  return client.workflow.start<OuterLoopWorkflow>(OUTER_LOOP_TYPE, {
    taskQueue: taskQueue('orchestration', e.taskQueuePrefix),
    workflowId: newOuterLoopId(input.campaignId),
    args: [input],
    typedSearchAttributes: loopSearchAttributes(input.campaignId, 'outer'),
  });
}

/** The most recently started loop of a kind (only a running one with `running`), or undefined. */
async function latestLoop<W extends Workflow>(
  client: Client,
  campaignId: string,
  kind: 'inner' | 'outer',
  running: boolean,
): Promise<WorkflowHandle<W> | undefined> {
  const query = `CampaignId = "${campaignId.replace(/"/g, '')}" AND LoopKind = "${kind}"${running ? ' AND ExecutionStatus = "Running"' : ''}`;
  for await (const wf of client.workflow.list({ query })) {
    return client.workflow.getHandle<W>(wf.workflowId);
  }
  return undefined;
}

/** The most recently started inner loop of a campaign, or undefined. */
export async function latestInnerLoop(client: Client, campaignId: string): Promise<WorkflowHandle | undefined> {
  return latestLoop(client, campaignId, 'inner', false);
}

export interface LatestLoopOptions {
  /** Only a loop that is still running (`ExecutionStatus = "Running"`). @default false */
  running?: boolean;
}

/** The most recently started outer loop of a campaign (scheduled or not), or undefined. */
export async function latestOuterLoop(
  client: Client,
  campaignId: string,
  opts: LatestLoopOptions = {},
): Promise<WorkflowHandle<OuterLoopWorkflow> | undefined> {
  return latestLoop<OuterLoopWorkflow>(client, campaignId, 'outer', opts.running ?? false);
}
