// `flywheel report CAMPAIGN`: the dashboard's campaign view frozen into files to share — one self-contained HTML
// file (SVG plots inline, no links back to a server) and Markdown with the same plots as SVG files beside it.
import type { Db } from '../../db/client';
import { fmtJson, fmtNum, fmtSeconds, fmtTime, html, message, page, raw, table, type Safe } from './html';
import { analysesOf } from '../../services/queries/analyses';
import { getCampaign, UNSANDBOXED_NOTE, type CampaignRow } from '../../services/queries/campaigns';
import { curves, metricNames } from '../../services/queries/curves';
import { decisionsOf, type DecisionRow } from '../../services/queries/decisions';
import { innerLoopsOf, type InnerLoopRow } from '../../services/queries/inner-loops';
import { leaderboardPage, type LeaderboardRow } from '../../services/queries/leaderboard';
import { outerIterationsOf, type OuterIterationRow } from '../../services/queries/outer-iterations';
import { sealedTestLine, sealedTestOf } from '../../services/queries/sealed-test';
import { lineChart } from './svg-chart';
import { gateDecisionsSection } from './report-gate-section';
import { NonRetryableError } from '../../core/errors';
import { decisionLines } from '../../core/gate/decision-lines';

/** Inner loops in a report (newest first), leaderboard rows per loop, curves per loop, decisions. */
const LOOPS = 10;
const ROWS = 20;
const CURVES = 8;
const DECISIONS = 200;

export interface CampaignReport {
  campaign: CampaignRow;
  iterations: OuterIterationRow[];
  /** `curvesSvg` and `heldoutSvg` are absent when there is nothing to plot: no file, no image link to an empty chart. */
  loops: Array<{ loop: InnerLoopRow; board: LeaderboardRow[]; metric?: string; curvesSvg?: string }>;
  decisions: DecisionRow[];
  analyses: Record<string, unknown>[];
  heldoutSvg?: string;
  /** The promotion gate's decisions, each check with its figures and named items (Markdown lines). */
  gateSection: string[];
}

export class UnknownCampaignError extends NonRetryableError {}

/** Everything a report shows, read in a handful of queries; `onStep` names each step (for the CLI's progress). */
export async function collectReport(db: Db, campaignId: string, onStep: (step: string) => void = () => undefined): Promise<CampaignReport> {
  onStep('campaign');
  const campaign = await getCampaign(db, campaignId);
  if (!campaign) throw new UnknownCampaignError(`unknown campaign "${campaignId}": nothing in the database by that id`);
  onStep('outer iterations');
  const iterations = await outerIterationsOf(db, campaignId);
  const loops = [];
  for (const loop of await innerLoopsOf(db, campaignId, LOOPS, 0)) {
    onStep(`inner loop ${loop.id}`);
    const board = await leaderboardPage(db, loop.id, loop.mode, ROWS, 0);
    const ids = board.slice(0, CURVES).map((e) => e.id);
    const [metric] = await metricNames(db, ids);
    const series = metric ? await curves(db, ids, metric) : [];
    loops.push({
      loop,
      board,
      metric,
      curvesSvg: series.some((x) => x.points.length) ? lineChart(series, { xLabel: 'step', yLabel: metric ?? '' }) : undefined,
    });
  }
  onStep('decisions and analyses');
  const [decisions, analyses, gateSection] = await Promise.all([
    decisionsOf(db, campaignId, DECISIONS, 0),
    analysesOf(db, campaignId),
    gateDecisionsSection(db, campaignId),
  ]);
  const prod = iterations.filter((i) => i.heldout_production !== null).map((i) => [i.iteration, i.heldout_production!] as [number, number]);
  const cand = iterations.filter((i) => i.heldout_candidate !== null).map((i) => [i.iteration, i.heldout_candidate!] as [number, number]);
  const heldoutSvg =
    !prod.length && !cand.length
      ? undefined
      : lineChart(
          [
            { name: 'production', points: prod },
            { name: 'candidate', points: cand },
          ],
          { xLabel: 'outer iteration', yLabel: iterations.find((i) => i.heldout_metric)?.heldout_metric ?? 'held-out', dots: true },
        );
  return { campaign, iterations, loops, decisions, analyses, heldoutSvg, gateSection };
}

const iterationCols = [
  { head: '#', cell: (i: OuterIterationRow) => i.iteration },
  { head: 'status', cell: (i: OuterIterationRow) => i.status },
  { head: 'new feedback', cell: (i: OuterIterationRow) => i.new_feedback },
  { head: 'held-out candidate', cell: (i: OuterIterationRow) => fmtNum(i.heldout_candidate) },
  { head: 'held-out incumbent', cell: (i: OuterIterationRow) => fmtNum(i.heldout_incumbent) },
  { head: 'held-out production', cell: (i: OuterIterationRow) => fmtNum(i.heldout_production) },
  { head: 'sealed test production', cell: (i: OuterIterationRow) => fmtNum(i.test_production) },
  // The verdict: the checks are the gate section's, one a line.
  { head: 'reason', cell: (i: OuterIterationRow) => decisionLines(i.reason ?? '').verdict },
];
const boardCols = (metric: string) => [
  { head: '#', cell: (e: LeaderboardRow) => e.index },
  { head: 'configuration', cell: (e: LeaderboardRow) => fmtJson(e.params) },
  { head: 'hypothesis', cell: (e: LeaderboardRow) => e.hypothesis || e.proposer },
  { head: `public ${metric}`, cell: (e: LeaderboardRow) => fmtNum(e.public_score) },
  { head: 'held-out', cell: (e: LeaderboardRow) => fmtNum(e.heldout_score) },
  { head: 'status', cell: (e: LeaderboardRow) => e.status },
  { head: 'duration', cell: (e: LeaderboardRow) => fmtSeconds(e.duration_s) },
  { head: 'capacity wait', cell: (e: LeaderboardRow) => fmtSeconds(e.capacity_wait_s) },
];
const decisionCols = [
  { head: 'kind', cell: (d: DecisionRow) => d.kind },
  { head: 'accepted', cell: (d: DecisionRow) => (d.accepted ? 'yes' : 'no') },
  { head: 'rule', cell: (d: DecisionRow) => d.rule },
  { head: 'reason', cell: (d: DecisionRow) => decisionLines(d.reason).verdict },
  { head: 'figures', cell: (d: DecisionRow) => fmtJson(d.figures, 400) },
  { head: 'experiment', cell: (d: DecisionRow) => d.experiment_id ?? '–' },
  { head: 'when', cell: (d: DecisionRow) => fmtTime(d.created_at) },
];
const analysisCols = (a: Record<string, unknown>[]) =>
  Object.keys(a[0] ?? {})
    .filter((k) => k !== 'campaign_id')
    .map((k) => ({ head: k, cell: (r: Record<string, unknown>) => (r[k] instanceof Date ? fmtTime(r[k]) : fmtJson(r[k], 600)) }));

export function reportHtml(r: CampaignReport, generatedAt = new Date()): string {
  const c = r.campaign;
  const loops: Safe[] = r.loops.map(
    (l) => html`<h3>${l.loop.id} <span class="muted">(${l.loop.status}, ${l.loop.experiments} experiments)</span></h3>
${l.curvesSvg ? html`<p>Training curves (${l.metric}) of the best ${Math.min(CURVES, l.board.length)}:</p>${raw(l.curvesSvg)}` : message('No training metrics recorded.')}
${l.board.length ? table(l.board, boardCols(l.loop.metric)) : message('No experiments.')}${l.loop.experiments > l.board.length ? html`<p class="muted">Top ${l.board.length} of ${l.loop.experiments}.</p>` : ''}`,
  );
  const body = html`<h1>Campaign ${c.id}</h1>${c.unsandboxed ? html`<p class="warning" id="unsandboxed"><b>${UNSANDBOXED_NOTE}</b></p>` : ''}
<p>Report made ${fmtTime(generatedAt)} UTC · production checkpoint <code>${c.production_checkpoint_id ?? 'none'}</code> · selection ${c.metric} (${c.mode}) · ${c.experiments} experiments (untrained baselines not counted) in ${c.inner_loops} inner loops, ${c.outer_iterations} outer iterations</p>
<p id="sealed-test">${sealedTestLine(sealedTestOf(r.iterations))}</p>
<h2>Production held-out score</h2>${r.heldoutSvg ? raw(r.heldoutSvg) : message('No held-out scores yet: the gate measures them in outer iterations.')}
<h2>Outer iterations</h2>${r.iterations.length ? table(r.iterations, iterationCols) : message('No outer iterations.')}
<h2>Inner loops${c.inner_loops > r.loops.length ? ` (newest ${r.loops.length} of ${c.inner_loops})` : ''}</h2>${loops.length ? loops : message('No inner loops.')}
<h2>Decisions</h2>${r.decisions.length ? table(r.decisions, decisionCols) : message('No decisions.')}
<h2>Analyses</h2>${r.analyses.length ? table(r.analyses, analysisCols(r.analyses)) : message('No analyses.')}`;
  // Self-contained: no link may point back at a dashboard that the reader does not have.
  return page(`Report: ${c.id}`, body, { subtitle: 'campaign report' }).replace('<a href="/">Flywheel</a>', '<b>Flywheel</b>');
}

/** What the Markdown says where a plot exists but is not written (`report --stdout`): never "no data". */
const PLOT_OMITTED = (what: string, where: string) => `Plot of ${what} omitted on stdout (\`--out DIR\` writes it); ${where}.`;

/**
 * Markdown of the same report; `images` maps each plot to the file name the caller writes it under (an empty name: a
 * plot that is drawn but not written, as `report --stdout` prints).
 */
export function reportMarkdown(
  r: CampaignReport,
  images: { heldout?: string; loops: (string | undefined)[] },
  generatedAt = new Date(),
): string {
  const c = r.campaign;
  const out: string[] = [
    `# Campaign ${c.id}`,
    '',
    ...(c.unsandboxed ? [`**${UNSANDBOXED_NOTE}**`, ''] : []),
    `Report made ${fmtTime(generatedAt)} UTC · production checkpoint \`${c.production_checkpoint_id ?? 'none'}\` · selection ${c.metric} (${c.mode}) · ${c.experiments} experiments (untrained baselines not counted) in ${c.inner_loops} inner loops, ${c.outer_iterations} outer iterations`,
    '',
    sealedTestLine(sealedTestOf(r.iterations)),
    '',
    '## Production held-out score',
    '',
    !r.heldoutSvg
      ? 'No held-out scores yet: the gate measures them in outer iterations.'
      : images.heldout
        ? `![production held-out score](${images.heldout})`
        : PLOT_OMITTED('the production held-out score', 'the outer iterations below hold its figures'),
    '',
    '## Outer iterations',
    '',
    mdTable(r.iterations, iterationCols, 'No outer iterations.'),
    '',
    '## Inner loops',
  ];
  r.loops.forEach((l, i) => {
    const img = !l.curvesSvg
      ? 'No training metrics recorded.'
      : images.loops[i]
        ? `![training curves](${images.loops[i]})`
        : PLOT_OMITTED(
            `training curves (${l.metric}) of the best ${Math.min(CURVES, l.board.length)}`,
            'the table below holds their scores',
          );
    out.push(
      '',
      `### ${l.loop.id} (${l.loop.status}, ${l.loop.experiments} experiments, untrained baseline included)`,
      '',
      img,
      '',
      mdTable(l.board, boardCols(l.loop.metric), 'No experiments.'),
    );
  });
  if (!r.loops.length) out.push('', 'No inner loops.');
  out.push('', '## Decisions', '', mdTable(r.decisions, decisionCols, 'No decisions.'), '', ...r.gateSection, '', '## Analyses', '');
  out.push(mdTable(r.analyses, analysisCols(r.analyses), 'No analyses.'), '');
  return out.join('\n');
}

function mdTable<R>(rows: R[], cols: Array<{ head: string; cell: (r: R) => unknown }>, empty: string): string {
  if (!rows.length) return empty;
  const cell = (v: unknown) =>
    String(v ?? '')
      .replace(/\|/g, '\\|')
      .replace(/\r?\n/g, ' ');
  return [
    `| ${cols.map((c) => cell(c.head)).join(' | ')} |`,
    `|${cols.map(() => ' --- |').join('')}`,
    ...rows.map((r) => `| ${cols.map((c) => cell(c.cell(r))).join(' | ')} |`),
  ].join('\n');
}
