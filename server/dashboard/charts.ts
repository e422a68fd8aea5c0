// ECharts options for the dashboard's charts, built on the server from query rows and drawn in the browser by
// assets.ts (SVG renderer): the optimisation history, each knob against the score, parallel coordinates, parameter
// importance, training curves and the campaign's held-out scores. Options are plain JSON: no functions.
import type { SearchSpace } from '../../core/spec';
import { esc, html, raw, type Safe } from './html';
import { MIN_TRIALS, type Importance } from './param-importance';
import type { TrialPoint } from '../../services/queries/trials';
import { axisRange, labelOffsets } from './chart-layout';

export type ChartOption = Record<string, unknown>;

const COLORS = [
  '#0969da',
  '#cf222e',
  '#1a7f37',
  '#8250df',
  '#bf8700',
  '#0a3069',
  '#e16f24',
  '#57606a',
  '#1b7c83',
  '#a40e26',
  '#6639ba',
  '#4d2d00',
];
const BASE = { animation: false, color: COLORS, textStyle: { fontFamily: 'system-ui, sans-serif' } };

/**
 * What an eval metric is measured in, where Flywheel knows (its suites' metrics). A trainer's own metrics (a curve's
 * `loss`) are labelled by the unit that trainer logs them in (core/metric-units.ts), never here.
 */
export function withUnit(metric: string): string {
  const units: Record<string, string> = {
    bits_per_byte: 'bits per byte',
    exact_match: 'exact match (fraction)',
    pass_rate: 'pass rate (fraction)',
    accuracy: 'accuracy (fraction)',
  };
  return units[metric] ?? metric;
}

/** The plot's height inside a chart box of `height` px with the grid's top and bottom margins. */
const plotHeight = (height: number, grid: { top: number; bottom: number }) => height - grid.top - grid.bottom;

/** A chart's place on a page: an element the client draws `option` into (or fills from its section's endpoint). */
export function chartBox(key: string, title: string, option?: ChartOption, height = 300): Safe {
  const json = option ? raw(`<script type="application/json">${JSON.stringify(option).replace(/</g, '\\u003c')}</script>`) : '';
  return html`<figure class="chart-fig"><figcaption>${title}</figcaption><div class="chart" id="chart-${key}" data-chart="${key}" style="height:${height}px">${json}</div></figure>`;
}

/** Every trial's score by index and the best so far (Optuna's optimisation history); the winner marked. */
export function historyOption(trials: TrialPoint[], metric: string, mode: 'min' | 'max', baseline?: number | null): ChartOption {
  const scored = trials.filter((t) => t.score !== null);
  let best: number | undefined;
  const bestSoFar: [number, number][] = [];
  for (const t of scored) {
    if (best === undefined || (mode === 'min' ? t.score! < best : t.score! > best)) best = t.score!;
    bestSoFar.push([t.index, best]);
  }
  const winner = scored.find((t) => t.score === best);
  return {
    ...BASE,
    ...(scored.length ? {} : emptyTitle('no scored trial yet')),
    tooltip: { trigger: 'item' },
    legend: { top: 0 },
    grid: { left: 64, right: 90, top: 56, bottom: 44 },
    xAxis: { type: 'value', name: 'trial (experiment index)', nameLocation: 'middle', nameGap: 26, minInterval: 1 },
    yAxis: { type: 'value', name: `public ${withUnit(metric)}`, scale: true },
    dataZoom: [{ type: 'inside' }],
    series: [
      { type: 'scatter', name: 'trial', symbolSize: 6, data: scored.map((t) => [t.index, t.score]) },
      {
        type: 'line',
        name: 'best so far',
        step: 'end',
        showSymbol: false,
        data: bestSoFar,
        endLabel: { show: true, formatter: '{a}' },
        markPoint: winner
          ? {
              symbol: 'pin',
              symbolSize: 36,
              data: [{ name: `winner e${winner.index}`, coord: [winner.index, winner.score], value: `e${winner.index}` }],
              label: { fontSize: 9 },
            }
          : undefined,
        ...(baseline !== undefined && baseline !== null
          ? {
              markLine: {
                symbol: 'none',
                data: [{ yAxis: baseline, name: 'untrained', label: { formatter: 'untrained {c}' } }],
                lineStyle: { type: 'dashed', color: '#57606a' },
              },
            }
          : {}),
      },
    ],
  };
}

/** One knob against the score, each trial a dot (Optuna's slice plot); a log axis for a log-scaled knob. */
export function sliceOption(space: SearchSpace, knob: string, trials: TrialPoint[], metric: string): ChartOption {
  const def = space[knob];
  const cat = def?.type === 'categorical';
  const pts = trials
    .filter((t) => t.score !== null && t.params[knob] !== undefined)
    .map((t) => [cat ? String(t.params[knob]) : t.params[knob], t.score, t.index]);
  return {
    ...BASE,
    tooltip: { trigger: 'item', formatter: `${esc(knob)} {c}` },
    grid: { left: 56, right: 12, top: 12, bottom: 40 },
    xAxis: cat
      ? { type: 'category', name: knob, nameLocation: 'middle', nameGap: 24, data: def.choices.map(String) }
      : {
          type: def?.log ? 'log' : 'value',
          name: knob,
          nameLocation: 'middle',
          nameGap: 24,
          scale: true,
          // An integer knob has integer ticks (never 9.5).
          ...(def?.type === 'int' ? { minInterval: 1 } : {}),
        },
    yAxis: { type: 'value', name: metric, scale: true },
    series: [{ type: 'scatter', name: knob, symbolSize: 5, data: pts }],
  };
}

/** Parallel coordinates over the knobs and the score, lines coloured by score (best in dark blue). */
export function parallelOption(space: SearchSpace, trials: TrialPoint[], metric: string, mode: 'min' | 'max'): ChartOption {
  const knobs = Object.keys(space);
  const scored = trials.filter((t) => t.score !== null);
  const scores = scored.map((t) => t.score!);
  const [lo, hi] = scores.length ? [Math.min(...scores), Math.max(...scores)] : [0, 1];
  return {
    ...BASE,
    tooltip: { trigger: 'item' },
    parallelAxis: [
      ...knobs.map((k, dim) => {
        const def = space[k];
        return def.type === 'categorical'
          ? { dim, name: k, type: 'category', data: def.choices.map(String) }
          : {
              dim,
              name: k,
              type: def.log ? 'log' : 'value',
              min: def.low,
              max: def.high,
              ...(def.type === 'int' ? { minInterval: 1 } : {}),
            };
      }),
      { dim: knobs.length, name: `public ${metric}`, type: 'value', scale: true },
    ],
    parallel: { left: 48, right: 96, top: 36, bottom: 24 },
    visualMap: {
      type: 'continuous',
      dimension: knobs.length,
      min: lo,
      max: hi === lo ? lo + 1 : hi,
      // Every line readable on white: the worst in orange, the best in dark blue.
      inRange: { color: mode === 'min' ? ['#0a3069', '#218bff', '#bf8700', '#e16f24'] : ['#e16f24', '#bf8700', '#218bff', '#0a3069'] },
      right: 0,
      top: 'middle',
      calculable: true,
      text: ['score', ''],
    },
    series: [
      {
        type: 'parallel',
        name: 'trials',
        lineStyle: { width: 1.2, opacity: 0.75 },
        data: scored.map((t) => [...knobs.map((k) => (space[k].type === 'categorical' ? String(t.params[k]) : t.params[k])), t.score]),
      },
    ],
  };
}

/** A chart's own message where it has nothing to draw yet. */
const emptyTitle = (text: string) => ({
  title: { text, left: 'center', top: 'middle', textStyle: { fontSize: 13, fontWeight: 'normal', color: '#656d76' } },
});

/** Below this many scored trials η² is shown with a caveat: a few trials explain almost any variance by chance. */
export const IMPORTANCE_CAVEAT_TRIALS = 10;

/** η² per knob, with how many trials it used; a caveat below IMPORTANCE_CAVEAT_TRIALS, nothing below MIN_TRIALS. */
export function importanceOption(imp: Importance[]): ChartOption {
  const rows = [...imp].reverse();
  const n = Math.max(0, ...imp.map((i) => i.trials));
  const note =
    n < IMPORTANCE_CAVEAT_TRIALS
      ? `from ${n} scored trials: too few to trust (under ${IMPORTANCE_CAVEAT_TRIALS}), chance alone explains much`
      : `from ${n} scored trials`;
  return {
    ...BASE,
    ...(imp.length
      ? {
          title: {
            text: note,
            right: 8,
            top: 0,
            textStyle: { fontSize: 12, fontWeight: 'normal', color: n < IMPORTANCE_CAVEAT_TRIALS ? '#cf222e' : '#656d76' },
          },
        }
      : emptyTitle(`needs at least ${MIN_TRIALS} scored trials`)),
    tooltip: { trigger: 'axis' },
    grid: { left: 96, right: 48, top: 28, bottom: 36 },
    xAxis: { type: 'value', name: 'η² (share of score variance)', nameLocation: 'middle', nameGap: 24, min: 0, max: 1 },
    yAxis: { type: 'category', data: rows.map((r) => r.knob) },
    series: [{ type: 'bar', name: 'importance', data: rows.map((r) => r.eta2), label: { show: true, position: 'right' } }],
  };
}

export interface CurveSeries {
  name: string;
  points: [number, number][];
  /** The loop's winner: drawn thick and always labelled. */
  winner?: boolean;
}

export type CurveAxis = 'step' | 'tokens' | 'time';
const AXIS_NAME: Record<CurveAxis, string> = {
  step: 'step',
  tokens: 'tokens seen',
  time: 'trainer wall-clock (s, from tokens ÷ tokens/s)',
};

/** A score drawn across a curve chart (a run's public or held-out score, when it is in the curves' unit). */
export interface ScoreMark {
  name: string;
  value: number;
}

/**
 * Training curves, one labelled line per run (hover for values, click a legend entry to hide a run); `label` names the
 * metric with the unit its trainer logs it in (core/metric-units.ts), the y axis spans the data, and end labels that
 * would overlap are moved apart.
 */
export function curvesOption(
  series: CurveSeries[],
  label: string,
  axis: CurveAxis,
  log: boolean,
  marks: ScoreMark[] = [],
  height = 340,
): ChartOption {
  const grid = { left: 64, right: 150, top: 56, bottom: 44 };
  const range = axisRange([...series.flatMap((s) => s.points.map((p) => p[1])), ...marks.map((m) => m.value)], log);
  const offsets = labelOffsets(
    series.map((s) => s.points[s.points.length - 1]?.[1]),
    range,
    plotHeight(height, grid),
    { log },
  );
  return {
    ...BASE,
    ...(series.length
      ? {}
      : emptyTitle(
          axis === 'step'
            ? 'no metrics yet'
            : `no run logs the tokens${axis === 'time' ? ' and tokens_per_s' : ''} metric${axis === 'time' ? 's' : ''}`,
        )),
    tooltip: { trigger: 'axis' },
    legend: { type: 'scroll', top: 0 },
    grid,
    xAxis: { type: 'value', name: AXIS_NAME[axis], nameLocation: 'middle', nameGap: 26, ...(axis === 'step' ? { minInterval: 1 } : {}) },
    yAxis: { type: log ? 'log' : 'value', name: label, scale: true, ...(range ?? {}) },
    dataZoom: [{ type: 'inside' }],
    series: series.map((s, i) => ({
      type: 'line',
      name: s.name,
      ...(i === 0 && marks.length
        ? {
            markLine: {
              symbol: 'none',
              lineStyle: { type: 'dashed' },
              label: { formatter: '{b} {c}', position: 'insideEndTop' },
              data: marks.map((m) => ({ name: m.name, yAxis: m.value })),
            },
          }
        : {}),
      showSymbol: false,
      data: s.points,
      lineStyle: { width: s.winner ? 3 : 1.5 },
      z: s.winner ? 3 : 2,
      emphasis: { focus: 'series' },
      // End labels that would overlap are moved apart (labelOffsets), so every curve keeps a readable label.
      endLabel: { show: true, formatter: '{a}', fontWeight: s.winner ? 'bold' : 'normal', offset: [0, offsets[i]] },
    })),
  };
}

export interface HeldoutPoint {
  /** 0: the untrained model, before the first iteration. */
  iteration: number;
  production?: number | null;
  candidate?: number | null;
  /** The inner loop winner's public score (the selection metric). */
  publicBest?: number | null;
}

/** The campaign's held-out scores per outer iteration from the untrained model on, with the winner's public score. */
export function heldoutOption(points: HeldoutPoint[], heldoutMetric: string, publicMetric: string, height = 320): ChartOption {
  const pick = (k: 'production' | 'candidate' | 'publicBest') =>
    points.filter((p) => p[k] !== null && p[k] !== undefined).map((p) => [p.iteration, p[k]]);
  const same = heldoutMetric === publicMetric;
  const grid = { left: 64, right: same ? 170 : 200, top: 56, bottom: 44 };
  const values = (k: 'production' | 'candidate' | 'publicBest') => points.map((p) => p[k]);
  // Each axis spans its own data (no right axis pinned at 0.5 whatever the scores).
  const left = axisRange([...values('production'), ...values('candidate'), ...(same ? values('publicBest') : [])]);
  const right = same ? left : axisRange(values('publicBest'));
  const last = (k: 'production' | 'candidate' | 'publicBest') => pick(k).at(-1)?.[1] as number | undefined;
  // End labels on one axis apart; on two axes, in pixels, each against its own axis.
  const px = plotHeight(height, grid);
  const ends = (['production', 'candidate', 'publicBest'] as const).map((k) => {
    const v = last(k);
    const r = k === 'publicBest' ? right : left;
    return v === undefined || !r ? undefined : r.max === r.min ? 0.5 : (v - r.min) / (r.max - r.min);
  });
  const offsets = labelOffsets(ends, { min: 0, max: 1 }, px);
  const line = (name: string, data: unknown[], offset: number, extra: Record<string, unknown> = {}) => ({
    type: 'line',
    name,
    data,
    symbolSize: 7,
    endLabel: { show: true, formatter: '{a}', offset: [0, offset] },
    ...extra,
  });
  return {
    ...BASE,
    tooltip: { trigger: 'axis' },
    legend: { top: 0 },
    grid,
    xAxis: {
      type: 'value',
      name: 'outer iteration (0 = untrained model)',
      nameLocation: 'middle',
      nameGap: 26,
      minInterval: 1,
      min: 0,
      max: Math.max(1, ...points.map((p) => p.iteration)),
    },
    yAxis: same
      ? { type: 'value', name: withUnit(heldoutMetric), scale: true, ...(left ?? {}) }
      : [
          { type: 'value', name: `held-out ${withUnit(heldoutMetric)}`, scale: true, ...(left ?? {}) },
          { type: 'value', name: `public ${withUnit(publicMetric)}`, scale: true, splitLine: { show: false }, ...(right ?? {}) },
        ],
    series: [
      line('production (held-out)', pick('production'), offsets[0], { lineStyle: { width: 3 } }),
      line('candidate (held-out)', pick('candidate'), offsets[1], { lineStyle: { type: 'dashed' } }),
      line('inner winner (public)', pick('publicBest'), offsets[2], {
        lineStyle: { type: 'dotted' },
        ...(same ? {} : { yAxisIndex: 1 }),
      }),
    ],
  };
}
