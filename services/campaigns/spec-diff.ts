// What changed between two campaign versions: one `path: old → new` line per leaf that differs (`(none)` where a
// path exists on one side only), in path order. Arrays are compared whole: a trainer's argv is one value.

export interface SpecChange {
  path: string;
  /** undefined: the path is absent on that side. */
  before: unknown;
  after: unknown;
}

export function diffSpecs(a: unknown, b: unknown): SpecChange[] {
  const left = leaves(a);
  const right = leaves(b);
  const paths = [...new Set([...left.keys(), ...right.keys()])].sort();
  return paths
    .filter((p) => JSON.stringify(left.get(p)) !== JSON.stringify(right.get(p)))
    .map((p) => ({ path: p, before: left.get(p), after: right.get(p) }));
}

export function formatChange(c: SpecChange): string {
  const show = (v: unknown) => (v === undefined ? '(none)' : JSON.stringify(v));
  return `${c.path}: ${show(c.before)} → ${show(c.after)}`;
}

function leaves(value: unknown, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out.set(prefix, value);
  }
  return out;
}
