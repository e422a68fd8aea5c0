// Line charts as SVG made on the server: the dashboard and the shared report draw the same images, with no
// charting library in the browser.
import { esc } from './html';
import type { Series } from '../../services/queries/curves';

export interface ChartOptions {
  width?: number;
  height?: number;
  xLabel?: string;
  yLabel?: string;
  /** Draws a dot at every point (sparse series: one per outer iteration). @default false */
  dots?: boolean;
  /** The `id` attribute, so a page can replace the chart in place. */
  id?: string;
}

const COLORS = ['#0969da', '#cf222e', '#1a7f37', '#8250df', '#bf8700', '#0a3069', '#e16f24', '#57606a'];

/** An SVG line chart; `data-points` holds the number of points drawn (the page's live updates and tests read it). */
export function lineChart(series: Series[], opts: ChartOptions = {}): string {
  const w = opts.width ?? 640;
  const h = opts.height ?? 260;
  const m = { l: 56, r: 12, t: 12, b: 36 };
  const all = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const idAttr = opts.id ? ` id="${esc(opts.id)}"` : '';
  const open = `<svg xmlns="http://www.w3.org/2000/svg"${idAttr} width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" data-points="${all.length}" role="img">`;
  if (all.length === 0) return `${open}<text x="${w / 2}" y="${h / 2}" text-anchor="middle" fill="#656d76">no data yet</text></svg>`;
  const [x0, x1] = extent(all.map((p) => p[0]));
  const [y0, y1] = extent(all.map((p) => p[1]));
  const sx = (x: number) => m.l + ((x - x0) / (x1 - x0 || 1)) * (w - m.l - m.r);
  const sy = (y: number) => h - m.b - ((y - y0) / (y1 - y0 || 1)) * (h - m.t - m.b);
  const parts: string[] = [open];
  for (const t of ticks(y0, y1))
    parts.push(
      `<line x1="${m.l}" x2="${w - m.r}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#eaeef2"/><text x="${m.l - 4}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end" font-size="10">${label(t)}</text>`,
    );
  for (const t of ticks(x0, x1))
    parts.push(`<text x="${sx(t).toFixed(1)}" y="${h - m.b + 14}" text-anchor="middle" font-size="10">${label(t)}</text>`);
  parts.push(
    `<line x1="${m.l}" x2="${m.l}" y1="${m.t}" y2="${h - m.b}" stroke="#57606a"/><line x1="${m.l}" x2="${w - m.r}" y1="${h - m.b}" y2="${h - m.b}" stroke="#57606a"/>`,
  );
  if (opts.xLabel)
    parts.push(`<text x="${(m.l + w - m.r) / 2}" y="${h - 4}" text-anchor="middle" font-size="11">${esc(opts.xLabel)}</text>`);
  if (opts.yLabel)
    parts.push(
      `<text x="12" y="${(m.t + h - m.b) / 2}" text-anchor="middle" font-size="11" transform="rotate(-90 12 ${(m.t + h - m.b) / 2})">${esc(opts.yLabel)}</text>`,
    );
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (!pts.length) return;
    const d = pts.map(([x, y], j) => `${j ? 'L' : 'M'}${sx(x).toFixed(1)} ${sy(y).toFixed(1)}`).join('');
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="1.5"><title>${esc(s.name)}</title></path>`);
    if (opts.dots)
      for (const [x, y] of pts)
        parts.push(
          `<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${color}"><title>${esc(s.name)}: ${label(y)}</title></circle>`,
        );
  });
  // A legend for up to 8 series; more would hide the plot.
  series
    .slice(0, 8)
    .forEach((s, i) =>
      parts.push(
        `<text x="${w - m.r - 4}" y="${m.t + 12 + i * 12}" text-anchor="end" font-size="10" fill="${COLORS[i % COLORS.length]}">${esc(s.name.length > 40 ? s.name.slice(-40) : s.name)}</text>`,
      ),
    );
  parts.push('</svg>');
  return parts.join('');
}

function extent(v: number[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of v) {
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  return lo === hi ? [lo - 0.5, hi + 0.5] : [lo, hi];
}

function ticks(lo: number, hi: number, n = 5): number[] {
  const step = niceStep((hi - lo) / n);
  const out: number[] = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9 && out.length < 20; t += step) out.push(t);
  return out;
}

function niceStep(raw: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

const label = (v: number): string => (Math.abs(v) >= 1000 || Number.isInteger(v) ? v.toFixed(0) : Number(v.toPrecision(3)).toString());
