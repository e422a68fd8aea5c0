// Grid search (Optuna's GridSampler): every combination of a few values per knob, each run once, in an order
// shuffled by the seeded stream so a budget smaller than the grid still spreads over it.
import { z } from 'zod';
import type { ParamDef, ParamValue, Params, SearchSpace } from '../spec';
import { searchedKey, type ProposalLabel, type Sampler, type SamplerContext } from './sampler';
import { checkParam } from './space';

/** The most points a grid may have: enumerated whole for every batch. */
export const MAX_GRID_POINTS = 100_000;

/** `innerLoop.samplerOptions` for `proposer: grid`. */
export const gridOptionsSchema = z.strictObject({
  /**
   * Values per numeric knob: evenly spaced from `low` to `high` on the knob's scale (log when `log`), ints rounded
   * and de-duplicated; an int knob with fewer values takes them all. Categorical knobs take every choice.
   * @default 5
   */
  points: z.number().int().min(2).max(1000).optional(),
  /** Explicit values for some knobs, instead of `points` (each must be valid for its knob). @default none */
  values: z.record(z.string(), z.array(z.union([z.number(), z.string(), z.boolean()])).min(1)).optional(),
});
export type GridOptions = z.infer<typeof gridOptionsSchema>;

const DEFAULT_POINTS = 5;

/** The values grid search tries for one knob. Explicit values no longer valid (a pinned knob) are dropped. */
export function gridValues(def: ParamDef, points: number, explicit?: readonly ParamValue[]): ParamValue[] {
  const valid = explicit?.filter((v) => !checkParam(def, v)) ?? [];
  if (valid.length > 0) return [...new Set(valid)];
  if (def.type === 'categorical') return [...new Set(def.choices)];
  if (def.low === def.high) return [def.low];
  if (def.type === 'int' && def.high - def.low + 1 <= points) return Array.from({ length: def.high - def.low + 1 }, (_, i) => def.low + i);
  const [a, b] = def.log ? [Math.log(def.low), Math.log(def.high)] : [def.low, def.high];
  const out = Array.from({ length: points }, (_, i) => {
    // The ends exactly, not exp(log(x)), so they pass checkParam.
    if (i === 0) return def.low;
    if (i === points - 1) return def.high;
    const x = a + ((b - a) * i) / (points - 1);
    const v = def.log ? Math.exp(x) : x;
    return def.type === 'int' ? Math.round(v) : v;
  });
  return [...new Set(out)];
}

/** Every knob's grid values, in the space's order. */
export function gridAxes(space: SearchSpace, options: GridOptions): [string, ParamValue[]][] {
  return Object.entries(space).map(([name, def]) => [name, gridValues(def, options.points ?? DEFAULT_POINTS, options.values?.[name])]);
}

/** Spec problems of grid options against a search space, as `path: message` lines. */
export function gridProblems(space: SearchSpace, options: GridOptions): string[] {
  const problems: string[] = [];
  for (const [name, values] of Object.entries(options.values ?? {})) {
    const def = space[name];
    if (!def) problems.push(`innerLoop.samplerOptions.values.${name}: not in the search space`);
    else
      for (const v of values) {
        const problem = checkParam(def, v);
        if (problem) problems.push(`innerLoop.samplerOptions.values.${name}: ${problem}`);
      }
  }
  const size = gridAxes(space, options).reduce((n, [, values]) => n * values.length, 1);
  if (size > MAX_GRID_POINTS)
    problems.push(`innerLoop.samplerOptions: the grid has ${size} points, more than ${MAX_GRID_POINTS}; lower points or list values`);
  return problems;
}

/**
 * `innerLoop.proposer: grid`: the grid's points not yet run (by any trial, whatever its state), in a seeded shuffle.
 * Once every point has run, points repeat in the same way, and the loop's budget or plateau rule ends it.
 */
export class GridSampler implements Sampler {
  private left = 0;
  private size = 0;

  constructor(private readonly options: GridOptions = {}) {}

  propose(ctx: SamplerContext): Params[] {
    const axes = gridAxes(ctx.space, this.options);
    const keyOf = searchedKey(ctx.space);
    const seen = new Set(ctx.history.map((t) => keyOf(t.params)));
    const all = product(axes);
    const unseen = all.filter((p) => !seen.has(keyOf(p)));
    this.size = all.length;
    this.left = unseen.length;
    const out: Params[] = [];
    let pool: Params[] = [];
    while (out.length < ctx.count) {
      if (pool.length === 0) pool = shuffled(unseen.length > 0 && out.length < unseen.length ? unseen : all, ctx.rng.int);
      out.push(pool.shift()!);
    }
    return out;
  }

  describe(_ctx: SamplerContext, index: number): ProposalLabel {
    const fresh = index < this.left;
    return {
      proposer: 'grid',
      hypothesis: fresh
        ? `grid search: one of the ${this.left} of ${this.size} grid points not yet run`
        : `grid search: every one of the ${this.size} grid points has run; repeating one`,
    };
  }
}

function product(axes: [string, ParamValue[]][]): Params[] {
  let out: Params[] = [{}];
  for (const [name, values] of axes) out = out.flatMap((p) => values.map((v) => ({ ...p, [name]: v })));
  return out;
}

/** A Fisher-Yates shuffle drawing from `int(low, high)`. */
function shuffled<T>(xs: readonly T[], int: (low: number, high: number) => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = int(0, i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
