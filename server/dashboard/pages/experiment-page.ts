// `/experiments/ID`: one experiment — configuration, scores, training attempts, its live curve, eval results and
// the decisions that name it.
import { NotFoundError, type DashboardContext } from '../context';
import { chartBox, curvesOption } from '../charts';
import { fmtJson, fmtMetrics, fmtNum, fmtParam, fmtSeconds, fmtTime, href, html, message, page, table, temporalLink } from '../html';
import { publicPredictions } from '../../../services/queries/predictions';
import { filterParams, predictionsSection } from '../predictions-view';
import { curves, curvesOnAxis, metricNames } from '../../../services/queries/curves';
import { decisionsOfExperiment } from '../../../services/queries/decisions';
import { evalsOf, getExperiment, runsOf } from '../../../services/queries/experiment';
import { selectionMetricOf } from '../../../services/queries/campaigns';
import { trainerOfCampaign } from '../../../services/queries/trainer-of-campaign';
import { metricLabel } from '../../../core/metric-units';
import { lineChart } from '../svg-chart';
import { decisionsTable } from './campaign-page';
import { chartScripts } from './live-script';
import { axisParam } from './loop-page';
import { recipeSection } from '../recipe-sections';
import { experimentRecipe } from '../../../services/recipe-history';

export async function experimentPage(ctx: DashboardContext, url: URL, id: string): Promise<string> {
  const e = await getExperiment(ctx.db, id);
  if (!e) throw new NotFoundError(`no experiment "${id}"`);
  const filter = filterParams(url);
  const [runs, evals, decisions, chart, predictions, recipe] = await Promise.all([
    runsOf(ctx.db, id),
    evalsOf(ctx.db, id),
    decisionsOfExperiment(ctx.db, id),
    experimentCurves(ctx, id),
    publicPredictions(ctx.db, { experimentId: id }, filter),
    experimentRecipe(ctx.db, id),
  ]);
  const body = html`<h1>Experiment ${id}</h1>
<p>Inner loop <a href="${href.loop(e.inner_loop_id)}">${e.inner_loop_id}</a> · campaign <a href="${href.campaign(e.campaign_id)}">${e.campaign_id}</a>${temporalLink(ctx.link(id))}</p>
<table id="experiment"><tbody>
<tr><th>status</th><td>${e.status}${e.error ? html` <span class="muted">(${e.error})</span>` : ''}</td></tr>
<tr><th>configuration</th><td>${table(
    [e.params],
    Object.keys(e.params).map((k) => ({ head: k, cell: (p: Record<string, unknown>) => fmtParam(p[k]), num: true })),
    'id="configuration"',
  )}</td></tr>
<tr><th>hypothesis</th><td>${e.hypothesis || '–'} <span class="muted">(${e.proposer})</span></td></tr>
<tr><th>public score</th><td>${fmtNum(e.public_score)}</td></tr><tr><th>held-out score</th><td>${fmtNum(e.heldout_score)}</td></tr>
<tr><th>best checkpoint</th><td><code>${e.best_checkpoint_id ?? '–'}</code></td></tr>
<tr><th>started / finished</th><td>${fmtTime(e.started_at)} / ${fmtTime(e.finished_at)} (${fmtSeconds(e.duration_s)}, waited ${fmtSeconds(e.capacity_wait_s)} for capacity)</td></tr>
</tbody></table>
${recipeSection(e.campaign_id, recipe)}
<section id="charts" data-charts-src="${href.experiment(id)}/charts.json" data-live="${e.status === 'running' || e.status === 'proposed' ? '1' : '0'}">
<div class="axis-controls">Curve against <select data-axis name="x"><option value="step">step</option><option value="tokens">tokens seen</option><option value="time">wall-clock</option></select>
<label><input type="checkbox" data-axis name="log" value="1"> log scale</label></div>
${chartBox('curves', `Training curve (${chart.metric ?? 'no metrics yet'})`, undefined, 340)}</section>
<h2>Training attempts</h2>${
    runs.length
      ? table(runs, [
          { head: 'attempt', cell: (r) => r.attempt, num: true },
          { head: 'backend', cell: (r) => r.backend },
          { head: 'status', cell: (r) => r.status },
          { head: 'exit code', cell: (r) => r.exit_code ?? '–', num: true },
          { head: 'trainer time', cell: (r) => fmtSeconds(r.trainer_seconds), num: true },
          { head: 'capacity wait', cell: (r) => fmtSeconds(r.capacity_wait_seconds), num: true },
          { head: 'stderr tail', cell: (r) => html`<code>${fmtJson(r.stderr_tail ?? '', 300)}</code>` },
        ])
      : message('Not launched yet.')
  }
<h2>Eval results</h2>${
    evals.length
      ? table(
          evals,
          [
            { head: 'suite', cell: (r) => r.suite_id },
            { head: 'split', cell: (r) => r.split },
            { head: 'items', cell: (r) => r.item_count, num: true },
            { head: 'metrics', cell: (r) => fmtMetrics(r.metrics) },
            { head: 'checkpoint', cell: (r) => r.checkpoint_id },
          ],
          'id="eval-results"',
        )
      : message('No eval results yet.')
  }
<h2 id="predictions-heading">Predictions on the public split</h2>${predictionsSection(predictions, url, filter)}
<form method="get" action="/compare" class="filters"><input type="hidden" name="a" value="${id}">Compare item by item with <input name="b" size="40" placeholder="another experiment id, or a campaign name" value="${e.inner_loop_id && id !== `${e.inner_loop_id}/baseline` ? `${e.inner_loop_id}/baseline` : ''}"> <button>Compare</button></form>
<h2>Decisions</h2>${decisions.length ? decisionsTable(decisions) : message('No decision names this experiment.')}`;
  return page(`Experiment ${id}`, body, { tail: chartScripts });
}

export async function experimentCurves(ctx: DashboardContext, id: string): Promise<{ svg: string; metric?: string; live: boolean }> {
  const e = await getExperiment(ctx.db, id);
  if (!e) throw new NotFoundError(`no experiment "${id}"`);
  const [metric] = await metricNames(ctx.db, [id]);
  const series = metric ? await curves(ctx.db, [id], metric, 1000) : [];
  return {
    svg: lineChart(series, { id: 'curves-chart', xLabel: 'step', yLabel: metric ?? '' }),
    metric,
    live: e.status === 'running' || e.status === 'proposed',
  };
}

/** `/experiments/ID/charts.json?x=&log=`: the experiment's training curve on the chosen axis. */
export async function experimentCharts(
  ctx: DashboardContext,
  url: URL,
  id: string,
): Promise<{ live: boolean; charts: Record<string, unknown> }> {
  const e = await getExperiment(ctx.db, id);
  if (!e) throw new NotFoundError(`no experiment "${id}"`);
  const axis = axisParam(url);
  const [metric] = await metricNames(ctx.db, [id]);
  const series = metric ? await curvesOnAxis(ctx.db, [id], metric, axis, 1000) : [];
  const short = id.slice(e.inner_loop_id.length + 1) || id;
  const named = series.map((s) => ({ name: s.name === id ? short : `${short}${s.name.slice(id.length)}`, points: s.points }));
  // A byte-level trainer's loss and a bits_per_byte selection metric share a unit: its scores sit on the curve's axis.
  const [selection, trainer] = await Promise.all([selectionMetricOf(ctx.db, e.campaign_id), trainerOfCampaign(ctx.db, e.campaign_id)]);
  const label = metricLabel(trainer.command, metric ?? 'loss', trainer);
  const marks =
    label === 'loss (bits per byte)' && selection === 'bits_per_byte'
      ? [
          ...(e.public_score !== null ? [{ name: 'public', value: e.public_score }] : []),
          ...(e.heldout_score !== null ? [{ name: 'held-out', value: e.heldout_score }] : []),
        ]
      : [];
  return {
    live: e.status === 'running' || e.status === 'proposed',
    charts: { curves: curvesOption(named, label, axis, url.searchParams.get('log') === '1', marks) },
  };
}
