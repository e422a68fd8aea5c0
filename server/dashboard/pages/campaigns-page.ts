// `/`: every campaign with its state, newest first, paginated.
import type { DashboardContext } from '../context';
import { failedLoopsOf, failedLoopsTable } from '../failed-loops';
import { fmtTime, href, html, message, page, pager, table } from '../html';
import { countCampaigns, listCampaigns, UNSANDBOXED_NOTE } from '../../../services/queries/campaigns';

const SIZE = 50;

export async function campaignsPage(ctx: DashboardContext, url: URL): Promise<string> {
  const pageNo = pageParam(url);
  const [total, list, failed] = await Promise.all([countCampaigns(ctx.db), listCampaigns(ctx.db, SIZE, pageNo * SIZE), failedLoopsOf(ctx)]);
  const body = total
    ? html`${table(
        list,
        [
          {
            head: 'campaign',
            cell: (c) =>
              html`<a href="${href.campaign(c.id)}">${c.id}</a>${c.unsandboxed ? html` <b class="warning" title="${UNSANDBOXED_NOTE}">unsandboxed</b>` : ''}`,
          },
          {
            head: 'state',
            cell: (c) =>
              c.running
                ? `${c.running} experiment(s) running`
                : c.last_outer_status
                  ? `last outer iteration: ${c.last_outer_status}`
                  : 'idle',
          },
          { head: 'production checkpoint', cell: (c) => c.production_checkpoint_id ?? '–' },
          { head: 'selection', cell: (c) => `${c.metric} (${c.mode})` },
          { head: 'outer iterations', cell: (c) => c.outer_iterations, num: true },
          { head: 'inner loops', cell: (c) => c.inner_loops, num: true },
          { head: 'experiments (baseline excluded)', cell: (c) => c.experiments, num: true },
          { head: 'created', cell: (c) => fmtTime(c.created_at) },
        ],
        'id="campaigns"',
      )}${pager('/', pageNo, SIZE, total)}`
    : message(
        'No campaigns yet. Start one with `flywheel run SPEC.yaml` or `flywheel demo`; it appears here as soon as its loop registers it.',
      );
  return page(
    'Campaigns',
    html`<h1>Campaigns</h1>${body}${failed.length ? html`<h2>Loops that ended without completing</h2>${failedLoopsTable(ctx, failed, true)}` : ''}`,
  );
}

/** The 0-based page number of `?page=`; anything else is the first page. */
export function pageParam(url: URL, name = 'page'): number {
  const v = Number(url.searchParams.get(name) ?? 0);
  return Number.isInteger(v) && v > 0 ? Math.min(v, 1_000_000) : 0;
}
