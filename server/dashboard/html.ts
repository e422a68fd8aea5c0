// The dashboard's HTML building blocks: escaping, the page frame, tables, pagination and number formats. Pages are
// plain server-rendered strings; nothing here touches the database.

/** Escapes text for HTML content and attribute values. */
export function esc(v: unknown): string {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A value already made safe (markup built here); `html` leaves it as it is. */
export class Safe {
  constructor(readonly html: string) {}
  toString(): string {
    return this.html;
  }
}

export const raw = (s: string): Safe => new Safe(s);
const part = (v: unknown): string => (v instanceof Safe ? v.html : Array.isArray(v) ? v.map(part).join('') : esc(v));

/** Tagged template: interpolated values are escaped unless they are `Safe` (or arrays of them). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Safe {
  return raw(strings.reduce((acc, s, i) => acc + s + (i < values.length ? part(values[i]) : ''), ''));
}

/** The stable URL of a dashboard page for an id that may hold slashes (`demo/inner/…/e3`). */
export const href = {
  campaign: (id: string) => `/campaigns/${encodeURIComponent(id)}`,
  loop: (id: string) => `/loops/${encodeURIComponent(id)}`,
  experiment: (id: string) => `/experiments/${encodeURIComponent(id)}`,
};

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1f24;background:#fafbfc}
header{background:#24292f;color:#fff;padding:8px 16px}header a{color:#fff;text-decoration:none;margin-right:16px}
main{padding:12px 16px;max-width:1400px}h1{font-size:20px}h2{font-size:16px;margin-top:24px}
table{border-collapse:collapse;background:#fff;margin:6px 0}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f0f3f6}td.num{text-align:right;font-variant-numeric:tabular-nums}code{font-size:12px}
.msg{padding:10px 14px;border:1px solid #d0d7de;background:#fff;margin:12px 0}.error{border-color:#cf222e;background:#ffebe9}
.muted{color:#656d76}.pager a{margin:0 6px}form.inline{display:inline}button{margin:2px}svg{background:#fff;border:1px solid #d0d7de}
.chart svg{border:0}.chart{background:#fff;border:1px solid #d0d7de}figure.chart-fig{margin:8px 0}figcaption{font-weight:600;margin:4px 0}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:12px}.grid3{display:grid;grid-template-columns:1fr 1fr 1fr;gap:12px}
.clip{display:inline-block;max-width:200px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;vertical-align:bottom}
table.checks td,table.checks th{font-size:12px}table.checks .clip{max-width:160px}td.pass{color:#1a7f37}td.fail{color:#cf222e;font-weight:600}
.scroll{max-width:100%;overflow-x:auto}.pass{color:#1a7f37}.fail{color:#cf222e;font-weight:600}
pre.text{margin:0;white-space:pre-wrap;word-break:break-word;max-width:320px;max-height:12em;overflow:auto;font-size:12px}
del{background:#ffebe9;color:#82071e}ins{background:#dafbe1;color:#116329;text-decoration:none}form.filters{margin:6px 0}
dl.metrics{display:grid;grid-template-columns:max-content max-content;gap:0 12px;margin:0;font-size:12px}dl.metrics dd{margin:0;text-align:right;font-variant-numeric:tabular-nums}
pre.patch{margin:4px 0;padding:6px;background:#fff;border:1px solid #d0d7de;font-size:12px;max-height:40em;overflow:auto}pre.patch span{display:inline-block;min-width:100%}
.patch .add{background:#dafbe1;color:#116329}.patch .del{background:#ffebe9;color:#82071e}.patch .hunk{color:#8250df}.patch .file{font-weight:600}
details.verdict{max-width:360px}details.verdict summary{cursor:pointer}ul.checks-list{margin:4px 0;padding-left:16px;font-size:12px}`;

export interface PageOptions {
  /** Extra markup for the end of <body> (the live-update script). */
  tail?: Safe;
  /** The header's subtitle. @default "read-only dashboard" */
  subtitle?: string;
}

export function page(title: string, body: Safe, opts: PageOptions = {}): string {
  return `<!doctype html>\n${
    html`<html lang="en"><head><meta charset="utf-8"><title>${title} · Flywheel</title><style>${raw(STYLE)}</style></head>
<body><header><a href="/">Flywheel</a><span class="muted">${opts.subtitle ?? 'read-only dashboard'}</span></header><main>${body}</main>${opts.tail ?? ''}</body></html>`
      .html
  }`;
}

/** A message box: what is (not) there and what to do about it. */
export const message = (text: string, kind: 'info' | 'error' = 'info'): Safe =>
  html`<div class="msg ${kind === 'error' ? 'error' : ''}" role="${kind === 'error' ? 'alert' : 'status'}">${text}</div>`;

export interface Column<R> {
  head: string;
  cell: (r: R) => unknown;
  num?: boolean;
}

export function table<R>(rows: R[], cols: Column<R>[], attrs = ''): Safe {
  const head = cols.map((c) => html`<th>${c.head}</th>`);
  const body = rows.map((r) => html`<tr>${cols.map((c) => html`<td${raw(c.num ? ' class="num"' : '')}>${c.cell(r)}</td>`)}</tr>`);
  // In a container that scrolls sideways: a wide table never widens the page past the screen.
  return html`<div class="scroll"><table ${raw(attrs)}><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

/** Previous/next links for `page` (0-based) of `total` rows, `size` per page. */
export function pager(base: string, pageNo: number, size: number, total: number, param = 'page'): Safe {
  const pages = Math.max(1, Math.ceil(total / size));
  const link = (p: number, label: string) => html`<a href="${base}${base.includes('?') ? '&' : '?'}${param}=${p}">${label}</a>`;
  return html`<div class="pager">${pageNo > 0 ? link(pageNo - 1, '← previous') : ''} page ${pageNo + 1} of ${pages} (${total} rows)${pageNo + 1 < pages ? link(pageNo + 1, 'next →') : ''}</div>`;
}

export function fmtNum(v: number | null | undefined, digits = 4): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return Math.abs(v) >= 1000 ? v.toFixed(0) : Number(v.toPrecision(digits)).toString();
}

export function fmtSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined || !Number.isFinite(s)) return '–';
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

export const fmtTime = (t: Date | string | null | undefined): string =>
  t ? new Date(t).toISOString().replace('T', ' ').slice(0, 19) : '–';

/** A knob's value for a table cell: numbers to 3 significant digits (exponent form when tiny or huge). */
export function fmtParam(v: unknown): string {
  if (v === undefined || v === null) return '–';
  if (typeof v !== 'number') return String(v);
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(2) : String(Number(v.toPrecision(3)));
}

/** Metrics by name (an eval result's), each to 4 significant digits, counts as they are: a two-column list. */
export function fmtMetrics(metrics: Record<string, number>): Safe {
  const names = Object.keys(metrics).sort();
  return html`<dl class="metrics">${names.map((k) => html`<dt>${k}</dt><dd>${fmtNum(metrics[k])}</dd>`)}</dl>`;
}

/** A JSON value in one short line (params, figures). */
export const fmtJson = (v: unknown, max = 200): string => {
  const s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

/** A link to the Temporal UI, or nothing when the stack has no UI. */
export const temporalLink = (url: string | undefined): Safe =>
  url ? html` <a class="temporal" href="${url}" target="_blank" rel="noopener">Temporal UI ↗</a>` : raw('');
