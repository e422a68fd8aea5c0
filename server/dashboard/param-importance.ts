// Parameter importance for the dashboard: for each knob, the share of the score's variance explained by the knob
// alone (the correlation ratio η² over quantile bins of the knob, on its log scale when the knob is log-scaled; one
// bin per choice for a categorical knob). A quick, model-free stand-in for Optuna's fANOVA: it sees main effects only.
import type { ParamDef, SearchSpace } from '../../core/spec';

/** Bins per numeric knob; fewer when there are few trials, so each bin holds a handful. */
const BINS = 5;

/** Fewer scored trials than this: no importance at all. */
export const MIN_TRIALS = 4;

export interface Importance {
  knob: string;
  /** η² in [0, 1]. */
  eta2: number;
  /** The scored trials it was computed from (those that set the knob). */
  trials: number;
}

export function paramImportance(space: SearchSpace, trials: readonly { params: Record<string, unknown>; score: number }[]): Importance[] {
  const out: Importance[] = [];
  for (const [knob, def] of Object.entries(space)) {
    const xs = trials.filter((t) => t.params[knob] !== undefined && Number.isFinite(t.score));
    if (xs.length < MIN_TRIALS) continue;
    out.push({
      knob,
      trials: xs.length,
      eta2: round(
        correlationRatio(
          xs.map((t) => t.score),
          bins(
            def,
            xs.map((t) => t.params[knob]),
          ),
        ),
      ),
    });
  }
  return out.sort((a, b) => b.eta2 - a.eta2 || (a.knob < b.knob ? -1 : 1));
}

/** The bin of each value: its choice for a categorical knob, else its quantile bin by rank. */
function bins(def: ParamDef, values: unknown[]): number[] {
  if (def.type === 'categorical') return values.map((v) => def.choices.indexOf(v as never));
  const x = values.map((v) => (def.log ? Math.log(Number(v)) : Number(v)));
  const k = Math.max(2, Math.min(BINS, Math.floor(x.length / 3)));
  const order = x.map((_, i) => i).sort((a, b) => x[a] - x[b] || a - b);
  const bin = new Array<number>(x.length);
  // Equal values share a bin, so a knob fixed at one value explains nothing.
  let b = 0;
  order.forEach((i, r) => {
    const want = Math.floor((r * k) / x.length);
    if (r > 0 && x[i] !== x[order[r - 1]]) b = want;
    bin[i] = b;
  });
  return bin;
}

function correlationRatio(y: number[], group: number[]): number {
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  const total = y.reduce((a, v) => a + (v - mean) ** 2, 0);
  if (total === 0) return 0;
  const sums = new Map<number, { s: number; n: number }>();
  y.forEach((v, i) => {
    const g = sums.get(group[i]) ?? { s: 0, n: 0 };
    g.s += v;
    g.n += 1;
    sums.set(group[i], g);
  });
  let between = 0;
  for (const g of sums.values()) between += g.n * (g.s / g.n - mean) ** 2;
  return between / total;
}

const round = (v: number) => Math.round(v * 1000) / 1000;
