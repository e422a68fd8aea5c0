// Layout figures the dashboard's chart options carry as plain numbers (options hold no functions): a value axis's
// bounds from the data, rounded to a tick step, and pixel offsets that keep lines' end labels apart.

/** A step of 1, 2 or 5 × 10^k near `span / 5`. */
function niceStep(span: number): number {
  const raw = span / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

const round = (v: number) => Number(v.toPrecision(12));

/** `v` rounded (down or up) to two significant digits: a log axis's end label stays short. */
const toSig = (v: number, dir: (x: number) => number) => {
  const p = 10 ** (Math.floor(Math.log10(v)) - 1);
  return round(dir(v / p) * p);
};

/**
 * Bounds that hold every finite value with a margin, on tick-step multiples (a log axis: a margin of a factor), never
 * below 0 for data that is not; undefined without data (the chart library's default then).
 */
export function axisRange(values: readonly (number | null | undefined)[], log = false): { min: number; max: number } | undefined {
  const xs = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && (!log || v > 0));
  if (!xs.length) return undefined;
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  if (log) return { min: toSig(lo / 1.25, Math.floor), max: toSig(hi * 1.25, Math.ceil) };
  const span = hi - lo || Math.abs(hi) * 0.1 || 1;
  const step = niceStep(span * 1.2);
  const min = Math.floor((lo - span * 0.05) / step) * step;
  const max = Math.ceil((hi + span * 0.05) / step) * step;
  return { min: round(lo >= 0 ? Math.max(0, min) : min), max: round(max) };
}

/**
 * Vertical pixel offsets for labels at the ends of lines (`values`, their last y; undefined: no label), so that no two
 * are closer than `gap` px (16: a 12 px label’s box) on a plot `plotPx` tall over `range`: labels keep their order, and only those that would
 * collide move.
 */
export function labelOffsets(
  values: readonly (number | undefined)[],
  range: { min: number; max: number } | undefined,
  plotPx: number,
  opts: { log?: boolean; gap?: number } = {},
): number[] {
  const gap = opts.gap ?? 16;
  const f = (v: number) => (opts.log ? Math.log(v) : v);
  const out = values.map(() => 0);
  if (!range || f(range.max) === f(range.min)) return out;
  const at = values.map((v) =>
    v === undefined || (opts.log && v <= 0) ? undefined : plotPx * (1 - (f(v) - f(range.min)) / (f(range.max) - f(range.min))),
  );
  const order = at.flatMap((y, i) => (y === undefined ? [] : [i])).sort((a, b) => at[a]! - at[b]! || a - b);
  const y = order.map((i) => at[i]!);
  // Down from the top: each label at least `gap` below the one above; then up from the bottom, so a pile at the
  // bottom spreads upwards rather than off the plot.
  for (let k = 1; k < y.length; k++) y[k] = Math.max(y[k], y[k - 1] + gap);
  const bottom = Math.max(plotPx, ...order.map((i) => at[i]!));
  if (y.length) y[y.length - 1] = Math.min(y[y.length - 1], bottom);
  for (let k = y.length - 2; k >= 0; k--) y[k] = Math.min(y[k], y[k + 1] - gap);
  order.forEach((i, k) => (out[i] = Math.round(y[k] - at[i]!)));
  return out;
}
