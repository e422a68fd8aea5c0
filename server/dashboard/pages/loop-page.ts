// `/loops/ID`: one inner loop — its workflow state and controls, live training curves of the page's experiments,
// and the leaderboard, one page at a time, ranked in SQL.
import { statusQuery, type InnerLoopStatus } from '../../../contracts/inner-loop';
import { BadRequestError, NotFoundError, within, type DashboardContext } from '../context';
import {
  chartBox,
  curvesOption,
  historyOption,
  importanceOption,
  parallelOption,
  sliceOption,
  type ChartOption,
  type CurveAxis,
} from '../charts';
import { fmtNum, fmtParam, fmtSeconds, href, html, message, page, pager, table, temporalLink, type Safe } from '../html';
import { paramImportance } from '../param-importance';
import { curves, curvesOnAxis, metricNames } from '../../../services/queries/curves';
import { baselineCount, searchSpaceOf, trialsOf, TRIALS } from '../../../services/queries/trials';
import { getInnerLoop, type InnerLoopRow } from '../../../services/queries/inner-loops';
import { loopEndReason } from '../../../services/loop-failures';
import { shownLoopStatus } from '../../../core/loop-status';
import { leaderboardPage, statusCounts, type LeaderboardRow } from '../../../services/queries/leaderboard';
import { lineChart } from '../svg-chart';
import { metricLabel } from '../../../core/metric-units';
import { trainerOfCampaign } from '../../../services/queries/trainer-of-campaign';
import { actionButton, actionForm } from './action-pages';
import { pageParam } from './campaigns-page';
import { chartScripts } from './live-script';
import { BASELINE_PROPOSER } from '../../../contracts/experiment';

const SIZE = 50;
/** Curves drawn: the page's first rows (best first), so the chart stays readable. */
const CURVES = 12;

export async function loopPage(ctx: DashboardContext, url: URL, id: string): Promise<string> {
  const loop = await getInnerLoop(ctx.db, id);
  if (!loop) throw new NotFoundError(`no inner loop "${id}"`);
  const pageNo = pageParam(url);
  const [counts, board, live, space] = await Promise.all([
    statusCounts(ctx.db, id),
    leaderboardPage(ctx.db, id, loop.mode, SIZE, pageNo * SIZE),
    liveState(ctx, id),
    searchSpaceOf(ctx.db, loop.campaign_id),
  ]);
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  const baselines = total > 0 ? await baselineCount(ctx.db, id) : 0;
  const running = (counts.running ?? 0) > 0 || live?.state === 'RUNNING';
  const knobs = Object.keys(space).length ? Object.keys(space) : [...new Set(board.flatMap((e) => Object.keys(e.params)))];
  const body = html`<h1>Inner loop ${id}</h1>
<p>Campaign <a href="${href.campaign(loop.campaign_id)}">${loop.campaign_id}</a> · dataset version <code>${loop.dataset_version_id}</code> · base checkpoint <code>${loop.base_checkpoint_id ?? 'none (from scratch)'}</code>${temporalLink(ctx.link(id))}</p>
<p id="loop-state">Status: <b id="loop-status">${shownLoopStatus(loop.status, live?.state)}</b>${live?.status ? html` · phase <b id="phase">${live.status.phase}</b> · ${live.status.launched} of ${live.status.budget} launched, ${live.status.parallelism} at once` : ''}</p>
${live?.reason ? html`<div class="msg error" role="alert" id="loop-failure">The loop ended ${live.state}: ${live.reason}</div>` : ''}
<p id="counts">${total - baselines} experiments${baselines ? ` + ${baselines} untrained baseline` : ''}: ${
    Object.entries(counts)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ') || 'none yet'
  }</p>
${controls(ctx, loop, live)}
<section id="charts" data-charts-src="${href.loop(id)}/charts.json?page=${pageNo}" data-live="${running ? '1' : '0'}">
<div class="axis-controls">Curves against <select data-axis name="x"><option value="step">step</option><option value="tokens">tokens seen</option><option value="time">wall-clock</option></select>
<label><input type="checkbox" data-axis name="log" value="1"> log scale</label> <span class="muted">hover for values; click a legend entry to hide a run; scroll to zoom</span></div>
<div class="grid2">${chartBox('curves', 'Training curves (running runs, this page’s best and the winner)', undefined, 340)}${chartBox('history', 'Optimisation history: public score per trial and best so far', undefined, 340)}</div>
<div class="grid2">${chartBox('parallel', `Parallel coordinates (latest ${TRIALS} trials at most)`, undefined, 320)}${chartBox('importance', 'Parameter importance (η²: main effects only)', undefined, 320)}</div>
<div class="grid3">${knobs.filter((k) => space[k]).map((k) => chartBox(`slice-${k}`, `${k} vs public ${loop.metric}`, undefined, 220))}</div>
</section>
<h2>Leaderboard</h2>${total ? html`${leaderboard(ctx, board, loop, knobs)}${pager(href.loop(id), pageNo, SIZE, total)}` : message('No experiments yet: the loop is preparing its task or waiting for proposals.')}`;
  return page(`Inner loop ${id}`, body, { tail: chartScripts });
}

/** The curves fragment the page polled before the charts were drawn in the browser; kept for the report and scripts. */
export async function loopCurvesFragment(ctx: DashboardContext, url: URL, id: string): Promise<{ svg: string; live: boolean }> {
  const loop = await getInnerLoop(ctx.db, id);
  if (!loop) throw new NotFoundError(`no inner loop "${id}"`);
  const [board, counts] = await Promise.all([
    leaderboardPage(ctx.db, id, loop.mode, SIZE, pageParam(url) * SIZE),
    statusCounts(ctx.db, id),
  ]);
  const ids = curveIds(board, loop);
  const [metric] = await metricNames(ctx.db, ids);
  const series = metric ? await curves(ctx.db, ids, metric) : [];
  return {
    svg: lineChart(series, { id: 'curves-chart', xLabel: 'step', yLabel: metric ?? '' }),
    live: (counts.running ?? 0) > 0 || loop.status === 'running',
  };
}

/** Running experiments first (the curves that move), then the page's best, and the loop's winner always. */
function curveIds(board: LeaderboardRow[], loop: InnerLoopRow): string[] {
  const ids = [
    ...board.filter((e) => e.status === 'running'),
    ...board.filter((e) => e.status !== 'running' && e.proposer !== BASELINE_PROPOSER),
  ]
    .slice(0, CURVES)
    .map((e) => e.id);
  if (loop.best_experiment_id && !ids.includes(loop.best_experiment_id)) ids.push(loop.best_experiment_id);
  return ids;
}

/** `/loops/ID/charts.json?page=&x=step|tokens|time&log=0|1`: every chart of the loop page, and whether runs are live. */
export async function loopCharts(
  ctx: DashboardContext,
  url: URL,
  id: string,
): Promise<{ live: boolean; charts: Record<string, ChartOption> }> {
  const loop = await getInnerLoop(ctx.db, id);
  if (!loop) throw new NotFoundError(`no inner loop "${id}"`);
  const axis = axisParam(url);
  const log = url.searchParams.get('log') === '1';
  const [board, counts, space, t, trainer] = await Promise.all([
    leaderboardPage(ctx.db, id, loop.mode, SIZE, pageParam(url) * SIZE),
    statusCounts(ctx.db, id),
    searchSpaceOf(ctx.db, loop.campaign_id),
    trialsOf(ctx.db, id),
    trainerOfCampaign(ctx.db, loop.campaign_id),
  ]);
  const ids = curveIds(board, loop);
  const [metric] = await metricNames(ctx.db, ids);
  const short = (e: string) => e.slice(loop.id.length + 1) || e;
  const series = metric ? await curvesOnAxis(ctx.db, ids, metric, axis) : [];
  const named = series.map((s) => {
    const winner = s.name === loop.best_experiment_id || s.name.startsWith(`${loop.best_experiment_id} (`);
    return { name: winner ? `★ ${short(s.name)} (winner)` : short(s.name), points: s.points, winner };
  });
  const charts: Record<string, ChartOption> = {
    curves: curvesOption(named, metricLabel(trainer.command, metric ?? 'loss', trainer), axis, log),
    history: historyOption(t.trials, loop.metric, loop.mode, t.baseline),
    parallel: parallelOption(space, t.trials, loop.metric, loop.mode),
    importance: importanceOption(
      paramImportance(
        space,
        t.trials.filter((x) => x.score !== null).map((x) => ({ params: x.params, score: x.score! })),
      ),
    ),
  };
  for (const k of Object.keys(space)) charts[`slice-${k}`] = sliceOption(space, k, t.trials, loop.metric);
  return { live: (counts.running ?? 0) > 0 || loop.status === 'running', charts };
}

export function axisParam(url: URL): CurveAxis {
  const x = url.searchParams.get('x') ?? 'step';
  if (x !== 'step' && x !== 'tokens' && x !== 'time') throw new BadRequestError(`x must be step, tokens or time, got "${x}"`);
  return x;
}

interface Live {
  state: string;
  status?: InnerLoopStatus;
  /** Why it ended without completing (its workflow failure, in one line). */
  reason?: string;
}

async function liveState(ctx: DashboardContext, id: string): Promise<Live | undefined> {
  if (!ctx.temporal) return undefined;
  const h = ctx.temporal.client.workflow.getHandle(id);
  const desc = await within(h.describe());
  if (!desc) return undefined;
  const state = desc.status.name;
  const status = state === 'RUNNING' ? await within(h.query(statusQuery)) : undefined;
  const reason = state !== 'RUNNING' && state !== 'COMPLETED' ? await within(loopEndReason(h)) : undefined;
  return { state, status, reason };
}

function controls(ctx: DashboardContext, loop: InnerLoopRow, live: Live | undefined): Safe {
  if (!ctx.temporal)
    return message('Controls need Temporal: start the dashboard with `flywheel up`, or set TEMPORAL_ADDRESS for `flywheel serve`.');
  if (live?.state !== 'RUNNING') return html``;
  const f = { loop: loop.id };
  const pending = live.status?.awaitingApproval ?? [];
  return html`<section id="controls"><h2>Controls</h2>
${live.status?.phase === 'paused' ? actionButton(ctx, 'resume', f, 'Resume') : actionButton(ctx, 'pause', f, 'Pause')} ${actionButton(ctx, 'stop', f, 'Stop')}
${actionForm(
  'budget',
  f,
  [
    { name: 'experiments', label: 'experiments', value: String(live.status?.budget ?? '') },
    { name: 'parallelism', label: 'at once', value: String(live.status?.parallelism ?? '') },
  ],
  'Change budget',
)}
${pending.length ? html`<p>Awaiting approval:</p><ul>${pending.map((e) => html`<li><code>${e}</code> ${actionButton(ctx, 'approve-proposal', { ...f, experiment: e, approve: 'true' }, 'Approve')} ${actionButton(ctx, 'approve-proposal', { ...f, experiment: e, approve: 'false' }, 'Reject')}</li>`)}</ul>` : ''}</section>`;
}

/** Scores and status first, then one column per knob with rounded values, so a 1400 px screen shows the scores. */
function leaderboard(ctx: DashboardContext, board: LeaderboardRow[], loop: InnerLoopRow, knobs: string[]): Safe {
  return table(
    board,
    [
      { head: '#', cell: (e) => e.index, num: true },
      {
        head: 'experiment',
        cell: (e) =>
          html`<a href="${href.experiment(e.id)}">${e.id.slice(loop.id.length + 1) || e.id}</a>${e.id === loop.best_experiment_id ? ' ★' : ''}`,
      },
      { head: 'status', cell: (e) => e.status },
      { head: `public ${loop.metric}`, cell: (e) => fmtNum(e.public_score), num: true },
      { head: 'held-out', cell: (e) => fmtNum(e.heldout_score), num: true },
      ...knobs.map((k) => ({ head: k, cell: (e: LeaderboardRow) => fmtParam(e.params[k]), num: true })),
      { head: 'duration', cell: (e) => fmtSeconds(e.duration_s), num: true },
      { head: 'capacity wait', cell: (e) => fmtSeconds(e.capacity_wait_s), num: true },
      {
        head: 'hypothesis',
        cell: (e) =>
          html`<span class="clip" title="${e.hypothesis}">${e.hypothesis || html`<span class="muted">${e.proposer}</span>`}</span>`,
      },
    ],
    'id="leaderboard"',
  );
}
