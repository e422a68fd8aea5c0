// Loops that ended without completing, each with the reason its workflow failed: on the campaigns page (every
// campaign's, so a loop refused before it wrote its campaign shows too) and on a campaign's page. Temporal holds the
// reasons, so the section needs it; without it the pages show what PostgreSQL has.
import { taskQueue as taskQueueOf } from '../../contracts/queues';
import { failedLoops, type EndedLoop } from '../../services/loop-failures';
import { within, type DashboardContext } from './context';
import { fmtTime, href, html, table, temporalLink, type Safe } from './html';

/** The latest loops (of `campaignId`, or of every campaign) that failed, were terminated, cancelled or timed out. */
export async function failedLoopsOf(ctx: DashboardContext, campaignId?: string): Promise<EndedLoop[]> {
  if (!ctx.temporal) return [];
  const taskQueue = taskQueueOf('orchestration', ctx.temporal.endpoints.taskQueuePrefix);
  return (await within(failedLoops(ctx.temporal.client, { campaignId, taskQueue, limit: 10 }))) ?? [];
}

export function failedLoopsTable(ctx: DashboardContext, loops: EndedLoop[], withCampaign: boolean): Safe {
  return table(
    loops,
    [
      { head: 'loop', cell: (l) => html`<code>${l.workflowId}</code>${temporalLink(ctx.link(l.workflowId))}` },
      ...(withCampaign
        ? [{ head: 'campaign', cell: (l: EndedLoop) => html`<a href="${href.campaign(l.campaignId)}">${l.campaignId}</a>` }]
        : []),
      { head: 'status', cell: (l) => l.status },
      { head: 'reason', cell: (l) => l.reason },
      { head: 'ended', cell: (l) => fmtTime(l.closedAt) },
    ],
    'id="failed-loops"',
  );
}
