// The predictions views: an experiment's public items with the model's output, the reference, the grade and a diff
// (on the experiment page), and two results item by item (the compare page), each filterable by category and
// verdict. Public items only (services/queries/predictions.ts reads no other split).
import { textDiff } from '../../core/text-diff';
import type { Comparison, PredictionItem, PublicPredictions, Verdict } from '../../services/queries/predictions';
import { BadRequestError } from './context';
import { fmtNum, href, html, message, table, type Safe } from './html';

/** Rows drawn at once; the filters narrow the rest. */
export const SHOWN = 200;

const VERDICTS: Verdict[] = ['pass', 'fail', 'loss'];
const CHANGES = ['better', 'worse', 'same'] as const;

/** The page's `category` and `verdict` (or `change`) filters, checked. */
export function filterParams(url: URL): { category?: string; verdict?: Verdict; change?: (typeof CHANGES)[number] } {
  const category = url.searchParams.get('category') || undefined;
  const verdict = url.searchParams.get('verdict') || undefined;
  const change = url.searchParams.get('change') || undefined;
  if (verdict !== undefined && !VERDICTS.includes(verdict as Verdict))
    throw new BadRequestError(`verdict must be pass, fail or loss, got "${verdict}"`);
  if (change !== undefined && !CHANGES.includes(change as never))
    throw new BadRequestError(`change must be better, worse or same, got "${change}"`);
  return { category, verdict: verdict as Verdict | undefined, change: change as (typeof CHANGES)[number] | undefined };
}

const select = (name: string, current: string | undefined, choices: readonly string[], all: string): Safe =>
  html`<select name="${name}"><option value="">${all}</option>${choices.map(
    (c) => html`<option value="${c}"${c === current ? html` selected` : ''}>${c}</option>`,
  )}</select>`;

/** A reference against an output: removed text struck in red, added text in green. */
export function diffCell(reference: string, output: string | undefined): Safe {
  if (output === undefined) return html`<span class="muted">–</span>`;
  const pieces = textDiff(reference, output);
  if (!pieces) return html`<span class="muted">too long to diff</span>`;
  return html`<pre class="text diff">${pieces.map((p) => (p.op === '=' ? p.text : p.op === '-' ? html`<del>${p.text}</del>` : html`<ins>${p.text}</ins>`))}</pre>`;
}

const text = (s: string | undefined): Safe => (s === undefined ? html`<span class="muted">–</span>` : html`<pre class="text">${s}</pre>`);
const grade = (i: PredictionItem): Safe =>
  html`<span class="${i.verdict === 'pass' ? 'pass' : i.verdict === 'fail' ? 'fail' : ''}">${i.verdict === 'loss' ? `${fmtNum(i.score)} bits/byte` : `${i.verdict} (${fmtNum(i.score)})`}</span>${i.error ? html`<br><span class="muted">${i.error}</span>` : ''}`;
const shortId = (id: string, suiteId: string) => (id.startsWith(`${suiteId}/`) ? id.slice(suiteId.length + 1) : id);

/** The experiment page's section: filters, then one row per public item. */
export function predictionsSection(p: PublicPredictions | undefined, url: URL, filter: { category?: string; verdict?: Verdict }): Safe {
  if (!p) return message('No public eval result yet: predictions appear once the experiment is scored on the public split.');
  const shown = p.items.slice(0, SHOWN);
  return html`<p class="muted">Checkpoint <code>${p.checkpointId}</code> on <code>${p.suiteId}</code>, public split only (held-out and test items are never shown).
${p.outputsStored ? '' : html`<b>This result was scored before outputs were kept: grades and references only.</b>`}</p>
<form method="get" action="${url.pathname}" class="filters">${select('category', filter.category, p.categories, 'every category')} ${select('verdict', filter.verdict, VERDICTS, 'every verdict')} <button>Filter</button></form>
<p id="predictions-count">${p.items.length} item${p.items.length === 1 ? '' : 's'}${p.items.length > SHOWN ? `, the first ${SHOWN} shown` : ''}</p>
${table(
  shown,
  [
    { head: 'item', cell: (i) => html`<code>${shortId(i.id, p.suiteId)}</code>` },
    { head: 'category', cell: (i) => i.category },
    { head: 'grade', cell: grade },
    { head: 'prompt', cell: (i) => text(i.prompt) },
    { head: 'reference', cell: (i) => text(i.reference) },
    { head: 'output', cell: (i) => text(i.output) },
    { head: 'diff (reference → output)', cell: (i) => diffCell(i.reference, i.output) },
  ],
  'id="predictions" class="predictions"',
)}`;
}

/** The compare page's body: the two results' figures, filters, and the shared items B against A. */
export function comparisonSection(c: Comparison, names: { a: string; b: string }, filter: { category?: string; change?: string }): Safe {
  const side = (p: PublicPredictions, name: string) =>
    html`<a href="${href.experiment(p.experimentId)}">${name}</a> <span class="muted">(checkpoint <code>${p.checkpointId}</code>; pass rate ${fmtNum(p.metrics.pass_rate)})</span>`;
  const shown = c.items.slice(0, SHOWN);
  const cats = [...new Set([...c.a.categories, ...c.b.categories])].sort();
  return html`<p>A: ${side(c.a, names.a)}<br>B: ${side(c.b, names.b)}<br><span class="muted">Public split only (held-out and test items are never shown).</span></p>
<form method="get" action="/compare" class="filters"><input type="hidden" name="a" value="${names.a}"><input type="hidden" name="b" value="${names.b}">${select('category', filter.category, cats, 'every category')} ${select('change', filter.change, CHANGES, 'every change')} <button>Filter</button></form>
<p id="compare-count">${c.items.length} shared item${c.items.length === 1 ? '' : 's'}${c.items.length > SHOWN ? `, the first ${SHOWN} shown` : ''}: ${CHANGES.map((k) => `${c.items.filter((i) => i.change === k).length} ${k}`).join(', ')}</p>
${
  c.items.length || filter.category || filter.change
    ? html`${table(
        shown,
        [
          { head: 'item', cell: (i) => html`<code>${shortId(i.id, c.a.suiteId)}</code>` },
          { head: 'category', cell: (i) => i.category },
          {
            head: 'change (B vs A)',
            cell: (i) => html`<span class="${i.change === 'better' ? 'pass' : i.change === 'worse' ? 'fail' : ''}">${i.change}</span>`,
          },
          { head: 'reference', cell: (i) => text(i.reference) },
          { head: 'A', cell: (i) => html`${grade(i.a)}${text(i.a.output)}` },
          { head: 'B', cell: (i) => html`${grade(i.b)}${text(i.b.output)}` },
          {
            head: 'diff (A → B)',
            cell: (i) => (i.a.output === undefined ? diffCell(i.reference, i.b.output) : diffCell(i.a.output, i.b.output)),
          },
        ],
        'id="comparison" class="predictions"',
      )}`
    : message('The two results share no public item (different suites).')
}`;
}
