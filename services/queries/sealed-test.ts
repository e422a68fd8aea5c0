// "What production really scores": the production model's figure on the sealed test split, which no decision reads
// (docs/eval-integrity.md). The outer loop scores it when it promotes, with the checkpoint the first promotion
// replaced as the before; one line for `flywheel report`, `flywheel status CAMPAIGN` and the dashboard.
import type { OuterIterationRow } from './outer-iterations';

type Row = Pick<
  OuterIterationRow,
  'iteration' | 'status' | 'test_metric' | 'test_production' | 'test_before' | 'test_items' | 'test_error'
>;

export interface SealedTest {
  /** The iteration that made the production model, when there is one. */
  iteration?: number;
  metric?: string;
  production?: number;
  items?: number;
  /** The checkpoint the first scored promotion replaced (the untrained baseline in a new campaign). */
  before?: number;
  /** Why production has no test figure. */
  missing?: string;
}

/** The production model's test figure from the iterations' summaries (oldest first, as outerIterationsOf lists them). */
export function sealedTestOf(rows: readonly Row[]): SealedTest {
  const last = rows.filter((r) => r.status === 'promoted').at(-1);
  if (!last) return { missing: 'no promotion yet' };
  const first = rows.find((r) => r.test_before !== null);
  const before = first?.test_metric === last.test_metric ? (first?.test_before ?? undefined) : undefined;
  if (last.test_production === null)
    return {
      iteration: last.iteration,
      missing: last.test_error
        ? `scoring failed: ${last.test_error}`
        : `iteration ${last.iteration} promoted it without a test score (a suite with no test split, or a loop older than the split)`,
    };
  return {
    iteration: last.iteration,
    metric: last.test_metric ?? undefined,
    production: last.test_production,
    items: last.test_items ?? undefined,
    before,
  };
}

/** `production on the sealed test split (what production really scores, read by no decision): bits_per_byte 1.2345 …`. */
export function sealedTestLine(t: SealedTest): string {
  const head = 'production on the sealed test split (what production really scores; no decision reads it)';
  if (t.production === undefined) return `${head}: - (${t.missing})`;
  const f = (v: number) => v.toFixed(4);
  const before = t.before === undefined ? '' : ` (before: ${f(t.before)}, the checkpoint the first promotion replaced)`;
  return `${head}: ${t.metric} ${f(t.production)} over ${t.items ?? '?'} items${before}`;
}
