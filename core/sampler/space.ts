// The search space and trial history as the samplers see them: uniform draws, validation of proposed params (an
// agent's or a sampler's), and the identity used to keep a campaign from running the same configuration twice.
import type { ParamDef, ParamValue, Params, SearchSpace } from '../spec';
import type { Rng } from './rng';

/** One past or running experiment, as the proposer sees it. */
export interface Trial {
  params: Params;
  /** The objective, lower is better (callers negate a max metric); undefined while pending or when failed/pruned. */
  value?: number;
  state: 'finished' | 'pending' | 'failed' | 'pruned';
}

/** One knob drawn uniformly: on a log scale when `log`, ints rounded, always inside [low, high]. */
export function sampleParam(def: ParamDef, rng: Rng): ParamValue {
  switch (def.type) {
    case 'categorical':
      return def.choices[rng.int(0, def.choices.length - 1)];
    case 'float': {
      if (def.high === def.low) return def.low;
      const x = def.log ? Math.exp(rng.uniform(Math.log(def.low), Math.log(def.high))) : rng.uniform(def.low, def.high);
      return clamp(x, def.low, def.high);
    }
    case 'int': {
      if (!def.log) return rng.int(def.low, def.high);
      // Widen by half a step so the end values get their full share of the log-uniform mass after rounding.
      const x = Math.exp(rng.uniform(Math.log(def.low - 0.5), Math.log(def.high + 0.5)));
      return clamp(Math.round(x), def.low, def.high);
    }
  }
}

/** A whole configuration drawn uniformly, knobs in the space's order. */
export function sampleParams(space: SearchSpace, rng: Rng): Params {
  const params: Params = {};
  for (const [name, def] of Object.entries(space)) params[name] = sampleParam(def, rng);
  return params;
}

/** Problems with one knob's value, or undefined when it is valid. */
export function checkParam(def: ParamDef, value: ParamValue): string | undefined {
  if (def.type === 'categorical') {
    return def.choices.includes(value) ? undefined : `${show(value)} is not one of ${def.choices.map(show).join(', ')}`;
  }
  if (typeof value !== 'number' || !Number.isFinite(value)) return `${show(value)} is not a finite number`;
  if (def.type === 'int' && !Number.isInteger(value)) return `${value} is not an integer`;
  if (value < def.low || value > def.high) return `${value} is outside [${def.low}, ${def.high}]`;
  return undefined;
}

/**
 * Every problem with a proposed configuration, as `knob: message` lines (the format of `formatIssues`):
 * unknown knob, missing knob, not a number, not an integer, out of range, not a listed choice. Empty when valid.
 */
export function validateParams(space: SearchSpace, params: Params): string[] {
  const problems: string[] = [];
  for (const [name, def] of Object.entries(space)) {
    if (!Object.hasOwn(params, name)) {
      problems.push(`${name}: missing`);
      continue;
    }
    const problem = checkParam(def, params[name]);
    if (problem) problems.push(`${name}: ${problem}`);
  }
  for (const name of Object.keys(params)) {
    if (!Object.hasOwn(space, name)) problems.push(`${name}: not in the search space`);
  }
  return problems;
}

/**
 * The space with some knobs fixed at given values (the outer loop's pinned model-shape knobs): the sampler then
 * draws only the free knobs, and a configuration it proposes is new as run, not merely before pinning. A value
 * outside its knob's range or choices is ignored, the knob stays free.
 */
export function fixKnobs(space: SearchSpace, values: Params): SearchSpace {
  const out: SearchSpace = { ...space };
  for (const [name, v] of Object.entries(values)) {
    const def = space[name];
    if (!def || checkParam(def, v)) continue;
    out[name] = def.type === 'categorical' ? { ...def, choices: [v] } : { ...def, low: v as number, high: v as number };
  }
  return out;
}

/** A canonical string for a configuration: keys sorted, values typed (so `1` and `"1"` differ). */
export function paramsKey(params: Params): string {
  return JSON.stringify(
    Object.keys(params)
      .sort()
      .map((k) => [k, params[k]]),
  );
}

/** Where a numeric value sits in its knob's range, in [0, 1] on the knob's own scale (log when `log`). */
export function toUnit(def: ParamDef & { type: 'float' | 'int' }, value: number): number {
  const t = (v: number) => (def.log ? Math.log(v) : v);
  const span = t(def.high) - t(def.low);
  return span > 0 ? clamp((t(value) - t(def.low)) / span, 0, 1) : 0;
}

/**
 * Whether two configurations are within `tol` of each other: Euclidean distance in the unit cube (each numeric knob
 * scaled to [0, 1] on its own scale, a categorical knob 0 when equal and 1 when not), divided by √d so the result is
 * in [0, 1] whatever the number of knobs. A knob missing or invalid on either side counts as fully different.
 */
export function isNearDuplicate(a: Params, b: Params, space: SearchSpace, tol: number): boolean {
  const names = Object.keys(space);
  if (names.length === 0) return true;
  let sq = 0;
  for (const name of names) {
    const def = space[name];
    const va = a[name];
    const vb = b[name];
    if (va === undefined || vb === undefined || checkParam(def, va) || checkParam(def, vb)) {
      sq += 1;
    } else if (def.type === 'categorical') {
      sq += va === vb ? 0 : 1;
    } else {
      const d = toUnit(def, va as number) - toUnit(def, vb as number);
      sq += d * d;
    }
  }
  return Math.sqrt(sq / names.length) <= tol;
}

/** How many distinct configurations the space holds; Infinity when any float knob has a non-empty range. */
export function spaceSize(space: SearchSpace): number {
  let size = 1;
  for (const def of Object.values(space)) {
    if (def.type === 'categorical') size *= new Set(def.choices).size;
    else if (def.type === 'int') size *= def.high - def.low + 1;
    else if (def.high > def.low) return Infinity;
  }
  return size;
}

/** Every configuration of a finite space, in a fixed order; callers check `spaceSize` first. */
export function* enumerateSpace(space: SearchSpace): Generator<Params> {
  const names = Object.keys(space);
  const values = names.map((n): ParamValue[] => {
    const def = space[n];
    if (def.type === 'categorical') return [...new Set(def.choices)];
    if (def.type === 'float') return [def.low];
    return Array.from({ length: def.high - def.low + 1 }, (_, i) => def.low + i);
  });
  const index = names.map(() => 0);
  for (;;) {
    yield Object.fromEntries(names.map((n, i) => [n, values[i][index[i]]]));
    let k = names.length - 1;
    while (k >= 0 && ++index[k] === values[k].length) index[k--] = 0;
    if (k < 0) return;
  }
}

function clamp(x: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, x));
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}
