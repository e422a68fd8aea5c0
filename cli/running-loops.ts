// `flywheel status` without a campaign: the loops running now, from Temporal's visibility (search attributes
// CampaignId and LoopKind), newest first.
import type { Client } from '@temporalio/client';
import { withSession } from './session';

export interface RunningLoop {
  workflowId: string;
  kind: string;
  campaignId: string;
  startTime: Date;
}

export async function runningLoops(client: Client, limit = 100): Promise<RunningLoop[]> {
  const out: RunningLoop[] = [];
  for await (const wf of client.workflow.list({ query: 'ExecutionStatus = "Running" AND (LoopKind = "inner" OR LoopKind = "outer")' })) {
    const attr = (k: string) => String((wf.searchAttributes?.[k] as unknown[] | undefined)?.[0] ?? '');
    out.push({ workflowId: wf.workflowId, kind: attr('LoopKind'), campaignId: attr('CampaignId'), startTime: wf.startTime });
    if (out.length >= limit) break;
  }
  return out;
}

export function formatRunningLoops(loops: RunningLoop[]): string {
  if (!loops.length) return 'no loop is running; `flywheel campaigns` lists the campaigns';
  const rows = loops.map((l) => [l.campaignId, l.kind, l.startTime.toISOString().slice(0, 19).replace('T', ' '), l.workflowId]);
  const head = ['campaign', 'loop', 'started (UTC)', 'workflow'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line), `${loops.length} running; \`flywheel status CAMPAIGN\` follows one`].join('\n');
}

export function printRunningLoops(json: boolean): Promise<void> {
  return withSession(async (s) => {
    const loops = await runningLoops(s.client);
    console.log(json ? JSON.stringify(loops, null, 2) : formatRunningLoops(loops));
  });
}
