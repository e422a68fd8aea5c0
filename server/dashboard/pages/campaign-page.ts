// `/campaigns/ID`: one campaign — production held-out score over the outer iterations, the iterations, inner
// loops, dataset versions, gate decisions and the agent's analyses, with the campaign-level actions.
import { latestOuterLoop } from '../../../services/campaign-loops';
import { outerStatusQuery, type PromotionEvidence } from '../../../contracts/outer-loop';
import { NotFoundError, within, type DashboardContext } from '../context';
import { fmtJson, fmtNum, fmtTime, href, html, message, page, pager, table, temporalLink, type Safe } from '../html';
import { analysesOf } from '../../../services/queries/analyses';
import { getCampaign, UNSANDBOXED_NOTE } from '../../../services/queries/campaigns';
import { datasetVersionsOf } from '../../../services/queries/datasets';
import type { DecisionFigures } from '../../../services/decisions';
import { countDecisions, decisionsOf, type DecisionRow } from '../../../services/queries/decisions';
import { survivorsLine, survivorsOf } from '../../../services/queries/survivors';
import { noiseLine } from '../../../core/gate/noise-check';
import { ledgerLine } from '../../../core/gate/heldout-budget';
import { countInnerLoops, innerLoopsOf } from '../../../services/queries/inner-loops';
import { outerIterationsOf, type OuterIterationRow } from '../../../services/queries/outer-iterations';
import { sealedTestLine, sealedTestOf } from '../../../services/queries/sealed-test';
import { chartBox, heldoutOption, type HeldoutPoint } from '../charts';
import { failedLoopsOf, failedLoopsTable } from '../failed-loops';
import { reasonCell } from '../reason-cell';
import { shownLoopStatus } from '../../../core/loop-status';
import { actionButton } from './action-pages';
import { pageParam } from './campaigns-page';
import { chartScripts } from './live-script';
import { recipeHistorySection } from '../recipe-sections';
import { campaignBestRecipe } from '../../../services/best-recipe-commit';
import { recipeLog } from '../../../services/recipe-history';

const SIZE = 50;

export async function campaignPage(ctx: DashboardContext, url: URL, id: string): Promise<string> {
  const c = await getCampaign(ctx.db, id);
  if (!c) return unrecordedCampaignPage(ctx, id);
  const loopsPage = pageParam(url, 'loops');
  const decisionsPage = pageParam(url, 'decisions');
  const [iterations, loopCount, loops, versions, decisionCount, decisions, analyses, pending, failed, survivors, recipe] =
    await Promise.all([
      outerIterationsOf(ctx.db, id),
      countInnerLoops(ctx.db, id),
      innerLoopsOf(ctx.db, id, SIZE, loopsPage * SIZE),
      datasetVersionsOf(ctx.db, id),
      countDecisions(ctx.db, id),
      decisionsOf(ctx.db, id, SIZE, decisionsPage * SIZE),
      analysesOf(ctx.db, id),
      pendingPromotion(ctx, id),
      failedLoopsOf(ctx, id),
      survivorsOf(ctx.db, id),
      recipeHistory(ctx, id, c.metric),
    ]);
  const base = href.campaign(id);
  const body = html`<h1>Campaign ${id}</h1>${c.unsandboxed ? html`<p class="warning" id="unsandboxed"><b>${UNSANDBOXED_NOTE}</b></p>` : ''}
<p id="survivors">${survivorsLine(survivors)}</p>
<p>Production checkpoint: <code>${c.production_checkpoint_id ?? 'none yet'}</code> · selection ${c.metric} (${c.mode}) · <span id="experiment-count">${c.experiments} experiments (the untrained baseline${c.baselines === 1 ? '' : 's'} of ${c.baselines} inner loop${c.baselines === 1 ? '' : 's'} not counted)</span>, ${c.running} running</p>
<p id="sealed-test">${sealedTestLine(sealedTestOf(iterations))}</p>
<section id="actions"><h2>Actions</h2>${ctx.temporal ? actionButton(ctx, 'trigger-outer', { campaign: id }, 'Trigger an outer iteration') : message('Actions need Temporal: start the dashboard with `flywheel up`, or set TEMPORAL_ADDRESS for `flywheel serve`.')}
${pending ? promotionBlock(ctx, pending) : ''}</section>
<h2>Held-out and public scores per outer iteration</h2>${heldoutChart(iterations, c.metric)}
${recipeHistorySection(recipe)}
<h2>Outer iterations</h2>${iterations.length ? iterationsTable(ctx, iterations) : message('No outer iterations yet: run `flywheel outer ' + id + '` or trigger one above.')}
<h2>Inner loops</h2>${
    loopCount
      ? html`${table(
          loops,
          [
            { head: 'inner loop', cell: (l) => html`<a href="${href.loop(l.id)}">${l.id}</a>${temporalLink(ctx.link(l.id))}` },
            // A loop whose workflow ended without completing shows that end (its reason is in the table below).
            { head: 'status', cell: (l) => shownLoopStatus(l.status, failed.find((f) => f.workflowId === l.id)?.status) },
            { head: 'experiments (with baseline)', cell: (l) => l.experiments, num: true },
            { head: 'running', cell: (l) => l.running, num: true },
            { head: `best public ${l0(loops)}`, cell: (l) => fmtNum(l.best_public), num: true },
            { head: 'dataset version', cell: (l) => l.dataset_version_id },
            { head: 'started', cell: (l) => fmtTime(l.created_at) },
          ],
          'id="inner-loops"',
        )}${pager(base, loopsPage, SIZE, loopCount, 'loops')}`
      : message('No inner loops yet.')
  }
${failed.length ? html`<h2>Loops that ended without completing</h2>${failedLoopsTable(ctx, failed, false)}` : ''}
<h2>Dataset versions</h2>${
    versions.length
      ? table(
          versions,
          [
            { head: 'version', cell: (v) => v.id },
            { head: 'dataset', cell: (v) => v.dataset },
            { head: 'examples', cell: (v) => v.examples, num: true },
            {
              head: 'sources',
              cell: (v) =>
                Object.entries(v.counts_by_source)
                  .map(([k, n]) => `${k}: ${n}`)
                  .join(', '),
            },
            { head: 'mix weights', cell: (v) => fmtJson(v.mix_weights) },
            { head: 'parents', cell: (v) => v.parent_ids.join(', ') || '–' },
            { head: 'created', cell: (v) => fmtTime(v.created_at) },
          ],
          'id="dataset-versions"',
        )
      : message('No dataset versions yet.')
  }
<h2>Decisions</h2>${decisionCount ? html`${decisionsTable(decisions)}${pager(base, decisionsPage, SIZE, decisionCount, 'decisions')}` : message('No decisions yet: the inner loop records one when it selects a winner, the gate one per candidate.')}
<h2>Analyses</h2>${analysesBlock(analyses)}`;
  return page(`Campaign ${id}`, body, { tail: chartScripts });
}

/** The kept recipe commits of a campaign with trainer.recipe; undefined for a campaign of knobs only. */
async function recipeHistory(ctx: DashboardContext, id: string, metric: string) {
  const best = await campaignBestRecipe(ctx.db, id);
  return 'none' in best ? undefined : { kept: await recipeLog(ctx.db, id), imported: best.recipe.commit, metric };
}

/** A campaign with no row: none, or one whose loops were refused before their first write (a trainer that cannot start). */
async function unrecordedCampaignPage(ctx: DashboardContext, id: string): Promise<string> {
  const failed = await failedLoopsOf(ctx, id);
  if (!failed.length) throw new NotFoundError(`no campaign "${id}"`);
  const body = html`<h1>Campaign ${id}</h1>${message('Nothing is recorded for this campaign: each of its loops ended before its first write.', 'error')}
<h2>Loops that ended without completing</h2>${failedLoopsTable(ctx, failed, false)}`;
  return page(`Campaign ${id}`, body);
}

const l0 = (loops: Array<{ metric: string }>): string => (loops[0] ? `(${loops[0].metric})` : '');

/** From the untrained model (iteration 0: the first gate's incumbent) on, integer iterations, every curve labelled. */
function heldoutChart(iterations: OuterIterationRow[], publicMetric: string): Safe {
  const measured = iterations.filter((i) => i.heldout_production !== null || i.heldout_candidate !== null);
  if (!measured.length) return message('No held-out scores yet: the gate measures them in outer iterations.');
  const metric = iterations.find((i) => i.heldout_metric)?.heldout_metric ?? 'held-out';
  const first = iterations[0];
  const points: HeldoutPoint[] = [
    ...(first && first.iteration === 1 && first.heldout_incumbent !== null ? [{ iteration: 0, production: first.heldout_incumbent }] : []),
    ...iterations.map((i) => ({
      iteration: i.iteration,
      production: i.heldout_production,
      candidate: i.heldout_candidate,
      publicBest: i.inner_best_public,
    })),
  ];
  return chartBox(
    'heldout',
    `Production and candidate on held-out ${metric}, inner winner on public ${publicMetric}`,
    heldoutOption(points, metric, publicMetric),
    320,
  );
}

function iterationsTable(ctx: DashboardContext, iterations: OuterIterationRow[]): Safe {
  return table(
    iterations,
    [
      { head: '#', cell: (i) => i.iteration, num: true },
      { head: 'status', cell: (i) => i.status },
      { head: 'trigger', cell: (i) => i.trigger },
      { head: 'new feedback', cell: (i) => i.new_feedback, num: true },
      { head: 'dataset version', cell: (i) => i.dataset_version_id ?? '–' },
      { head: 'inner loop', cell: (i) => (i.inner_loop_id ? html`<a href="${href.loop(i.inner_loop_id)}">${i.inner_loop_id}</a>` : '–') },
      { head: 'held-out candidate', cell: (i) => fmtNum(i.heldout_candidate), num: true },
      { head: 'held-out incumbent', cell: (i) => fmtNum(i.heldout_incumbent), num: true },
      { head: 'held-out production', cell: (i) => fmtNum(i.heldout_production), num: true },
      { head: 'sealed test production', cell: (i) => fmtNum(i.test_production), num: true },
      { head: 'reason', cell: (i) => reasonCell(i.reason) },
      { head: 'workflow', cell: (i) => html`<code>${i.workflow_id}</code>${temporalLink(ctx.link(i.workflow_id))}` },
    ],
    'id="outer-iterations"',
  );
}

export function decisionsTable(decisions: DecisionRow[]): Safe {
  return table(
    decisions,
    [
      { head: 'kind', cell: (d) => d.kind },
      { head: 'accepted', cell: (d) => (d.accepted ? 'yes' : 'no') },
      { head: 'rule', cell: (d) => d.rule },
      { head: 'reason', cell: (d) => reasonCell(d.reason) },
      { head: 'noise (Δ vs kσ); held-out budget, α', cell: (d) => noiseCell(d.figures) },
      { head: 'figures', cell: (d) => figuresCell(d.figures) },
      {
        head: 'experiment',
        cell: (d) => (d.experiment_id ? html`<a href="${href.experiment(d.experiment_id)}">${d.experiment_id}</a>` : '–'),
      },
      { head: 'when', cell: (d) => fmtTime(d.created_at) },
    ],
    'id="decisions"',
  );
}

/**
 * A gate decision's Δ against the multiple of σ (across seeds and items), then what it spent of the held-out budget and
 * its α-spending level; '–' for other decisions and older gates.
 */
function noiseCell(figures: DecisionFigures): string {
  const lines = [figures.noise ? noiseLine(figures.noise) : undefined, ledgerLine(figures)].filter((l) => l !== undefined);
  return lines.length > 0 ? lines.join('; ') : '–';
}

/** A gate decision's checks as a table (check, verdict, reason, figures); other decisions' figures as short JSON. */
function figuresCell(figures: DecisionFigures): Safe {
  const { checks } = figures;
  if (!checks || typeof checks !== 'object') return html`<code>${fmtJson(figures, 400)}</code>`;
  // Failed checks first, then by name (PostgreSQL's jsonb keeps no key order).
  const rows = Object.entries(checks).sort(([a, x], [b, y]) => Number(x.passed) - Number(y.passed) || (a < b ? -1 : 1));
  return table(
    rows,
    [
      { head: 'check', cell: ([rule]) => rule },
      { head: 'verdict', cell: ([, c]) => (c.passed ? 'pass' : 'FAIL') },
      { head: 'reason', cell: ([, c]) => html`<span class="clip" title="${c.reason}">${c.reason}</span>` },
      {
        head: 'figures',
        cell: ([, c]) =>
          Object.entries(c)
            .filter(([k]) => k !== 'passed' && k !== 'reason')
            .slice(0, 6)
            .map(([k, v]) => `${k} ${typeof v === 'number' ? fmtNum(v) : String(v)}`)
            .join(' · '),
      },
    ],
    'class="checks"',
  );
}

function analysesBlock(analyses: Record<string, unknown>[]): Safe {
  if (!analyses.length) return message('No analyses yet.');
  const cols = Object.keys(analyses[0]).filter((k) => k !== 'campaign_id');
  return table(
    analyses,
    cols.map((k) => ({ head: k, cell: (r: Record<string, unknown>) => (r[k] instanceof Date ? fmtTime(r[k]) : fmtJson(r[k], 600)) })),
    'id="analyses"',
  );
}

async function pendingPromotion(
  ctx: DashboardContext,
  campaignId: string,
): Promise<{ workflowId: string; evidence: PromotionEvidence } | undefined> {
  if (!ctx.temporal) return undefined;
  const h = await within(latestOuterLoop(ctx.temporal.client, campaignId, { running: true }));
  if (!h) return undefined;
  const s = await within(h.query(outerStatusQuery));
  return s?.awaitingApproval ? { workflowId: h.workflowId, evidence: s.awaitingApproval } : undefined;
}

function promotionBlock(ctx: DashboardContext, p: { workflowId: string; evidence: PromotionEvidence }): Safe {
  const e = p.evidence;
  return html`<div class="msg" id="pending-promotion"><b>Promotion awaiting approval</b> in <code>${p.workflowId}</code>: candidate <code>${e.candidateCheckpointId}</code>
vs incumbent <code>${e.incumbentCheckpointId}</code>. Gate: ${e.gate.promote ? 'promote' : 'hold'} (${e.gate.rule}: ${e.gate.reason}). Default at ${e.deadline}: ${e.defaultDecision}.<br>
${actionButton(ctx, 'approve-promotion', { workflow: p.workflowId, approve: 'true' }, 'Approve promotion')} ${actionButton(ctx, 'approve-promotion', { workflow: p.workflowId, approve: 'false' }, 'Reject promotion')}</div>`;
}
