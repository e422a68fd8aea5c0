// `/loops/ID`: one inner loop — its workflow state and controls, live training curves of the page's experiments,
// and the leaderboard, one page at a time, ranked in SQL.
import { statusQuery, type InnerLoopStatus } from '../../../workflows/inner-loop-api';
import { NotFoundError, within, type DashboardContext } from '../context';
import { fmtJson, fmtNum, fmtSeconds, href, html, message, page, pager, raw, table, temporalLink, type Safe } from '../html';
import { curves, metricNames } from '../queries/curves';
import { getInnerLoop, type InnerLoopRow } from '../queries/inner-loops';
import { leaderboardPage, statusCounts, type LeaderboardRow } from '../queries/leaderboard';
import { lineChart } from '../svg-chart';
import { actionButton, actionForm } from './action-pages';
import { pageParam } from './campaigns-page';
import { liveScript } from './live-script';

const SIZE = 50;
/** Curves drawn: the page's first rows (best first), so the chart stays readable. */
const CURVES = 12;

export async function loopPage(ctx: DashboardContext, url: URL, id: string): Promise<string> {
  const loop = await getInnerLoop(ctx.db, id);
  if (!loop) throw new NotFoundError(`no inner loop "${id}"`);
  const pageNo = pageParam(url);
  const [counts, board, live] = await Promise.all([statusCounts(ctx.db, id), leaderboardPage(ctx.db, id, loop.mode, SIZE, pageNo * SIZE), liveState(ctx, id)]);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const chart = await loopCurves(ctx, id, board);
  const curvesUrl = `${href.loop(id)}/curves.svg?page=${pageNo}`;
  const running = (counts.running ?? 0) > 0 || live?.state === 'RUNNING';
  const body = html`<h1>Inner loop ${id}</h1>
<p>Campaign <a href="${href.campaign(loop.campaign_id)}">${loop.campaign_id}</a> · dataset version <code>${loop.dataset_version_id}</code> · base checkpoint <code>${loop.base_checkpoint_id ?? 'none (from scratch)'}</code>${temporalLink(ctx.link(id))}</p>
<p id="loop-state">Recorded status: <b>${loop.status}</b>${live ? html` · workflow: <b id="workflow-state">${live.state}</b>${live.status ? html` · phase <b id="phase">${live.status.phase}</b> · ${live.status.launched} of ${live.status.budget} launched, ${live.status.parallelism} at once` : ''}` : ''}</p>
<p id="counts">${total} experiments: ${Object.entries(counts).map(([k, n]) => `${n} ${k}`).join(', ') || 'none yet'}</p>
${controls(ctx, loop, live)}
<h2>Training curves (${chart.metric ?? 'no metrics yet'})</h2><div id="curves" data-src="${curvesUrl}" data-live="${running ? '1' : '0'}">${raw(chart.svg)}</div>
<h2>Leaderboard</h2>${total ? html`${leaderboard(ctx, board, loop)}${pager(href.loop(id), pageNo, SIZE, total)}` : message('No experiments yet: the loop is preparing its task or waiting for proposals.')}`;
  return page(`Inner loop ${id}`, body, { tail: liveScript });
}

/** The curves fragment the page polls while the loop runs; the header says whether to keep polling. */
export async function loopCurvesFragment(ctx: DashboardContext, url: URL, id: string): Promise<{ svg: string; live: boolean }> {
  const loop = await getInnerLoop(ctx.db, id);
  if (!loop) throw new NotFoundError(`no inner loop "${id}"`);
  const [board, counts] = await Promise.all([leaderboardPage(ctx.db, id, loop.mode, SIZE, pageParam(url) * SIZE), statusCounts(ctx.db, id)]);
  return { svg: (await loopCurves(ctx, id, board)).svg, live: (counts.running ?? 0) > 0 || loop.status === 'running' };
}

async function loopCurves(ctx: DashboardContext, id: string, board: LeaderboardRow[]): Promise<{ svg: string; metric?: string }> {
  // Running experiments first (those are the curves that move), then the best of the page.
  const ids = [...board.filter((e) => e.status === 'running'), ...board.filter((e) => e.status !== 'running')].slice(0, CURVES).map((e) => e.id);
  const [metric] = await metricNames(ctx.db, ids);
  const series = metric ? await curves(ctx.db, ids, metric) : [];
  return { svg: lineChart(series, { id: 'curves-chart', xLabel: 'step', yLabel: metric ?? '' }), metric };
}

interface Live {
  state: string;
  status?: InnerLoopStatus;
}

async function liveState(ctx: DashboardContext, id: string): Promise<Live | undefined> {
  if (!ctx.temporal) return undefined;
  const h = ctx.temporal.client.workflow.getHandle(id);
  const desc = await within(h.describe());
  if (!desc) return undefined;
  const status = desc.status.name === 'RUNNING' ? await within(h.query(statusQuery)) : undefined;
  return { state: desc.status.name, status };
}

function controls(ctx: DashboardContext, loop: InnerLoopRow, live: Live | undefined): Safe {
  if (!ctx.temporal) return message('Controls need Temporal: start the dashboard with `flywheel up`, or set TEMPORAL_ADDRESS for `flywheel serve`.');
  if (live?.state !== 'RUNNING') return html``;
  const f = { loop: loop.id };
  const pending = live.status?.awaitingApproval ?? [];
  return html`<section id="controls"><h2>Controls</h2>
${live.status?.phase === 'paused' ? actionButton(ctx, 'resume', f, 'Resume') : actionButton(ctx, 'pause', f, 'Pause')} ${actionButton(ctx, 'stop', f, 'Stop')}
${actionForm('budget', f, [{ name: 'experiments', label: 'experiments', value: String(live.status?.budget ?? '') }, { name: 'parallelism', label: 'at once', value: String(live.status?.parallelism ?? '') }], 'Change budget')}
${pending.length ? html`<p>Awaiting approval:</p><ul>${pending.map((e) => html`<li><code>${e}</code> ${actionButton(ctx, 'approve-proposal', { ...f, experiment: e, approve: 'true' }, 'Approve')} ${actionButton(ctx, 'approve-proposal', { ...f, experiment: e, approve: 'false' }, 'Reject')}</li>`)}</ul>` : ''}</section>`;
}

function leaderboard(ctx: DashboardContext, board: LeaderboardRow[], loop: InnerLoopRow): Safe {
  return table(board, [
    { head: '#', cell: (e) => e.index, num: true },
    { head: 'experiment', cell: (e) => html`<a href="${href.experiment(e.id)}">${e.id.slice(loop.id.length + 1) || e.id}</a>${e.id === loop.best_experiment_id ? ' ★' : ''}` },
    { head: 'configuration', cell: (e) => html`<code>${fmtJson(e.params)}</code>` },
    { head: 'hypothesis', cell: (e) => e.hypothesis || html`<span class="muted">${e.proposer}</span>` },
    { head: `public ${loop.metric}`, cell: (e) => fmtNum(e.public_score), num: true },
    { head: 'held-out', cell: (e) => fmtNum(e.heldout_score), num: true },
    { head: 'status', cell: (e) => e.status },
    { head: 'duration', cell: (e) => fmtSeconds(e.duration_s), num: true },
    { head: 'capacity wait', cell: (e) => fmtSeconds(e.capacity_wait_s), num: true },
  ], 'id="leaderboard"');
}
