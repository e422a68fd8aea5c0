// The metrics an eval suite reports, by name, and how each is computed from per-item scores. One place for the names
// that `selection.metric`, the gate's `metric` and `eval_results.metrics` share:
//   pass_rate          mean score over every graded item (every grader but bits_per_byte)
//   accuracy           the same figure, under its older name
//   exact_match        mean over exact_token items
//   grader.<kind>      mean over the items of one grader kind (grader.numeric_tolerance, …)
//   category.<name>    mean over the graded items of one category
//   bits_per_byte      the loss items' bits per byte (lower is better; every other metric is higher-is-better)
// Pure: no I/O.

/** The part of an eval item a metric depends on (never its text). */
export interface MetricItem {
  grader: string;
  category: string;
}

/** A graded item's outcome, as the eval activity records it. */
export interface ScoredItem extends MetricItem {
  score: number;
  /** The grader could not score it (an error is never a pass). */
  error?: boolean;
  /** Its output wrote or completed a canary. */
  canaryHit?: boolean;
  /** Its output completed a held-out canary. */
  heldoutCanaryHit?: boolean;
}

export const LOSS_GRADER = 'bits_per_byte';
export const LOSS_METRIC = 'bits_per_byte';
const GRADER_PREFIX = 'grader.';
const CATEGORY_PREFIX = 'category.';

const graded = (i: MetricItem) => i.grader !== LOSS_GRADER;

/** Whether a larger value of the metric is better: every metric but bits_per_byte. */
export function higherIsBetter(metric: string): boolean {
  return metric !== LOSS_METRIC;
}

/**
 * Which items' per-item scores make up the metric (the gate pairs these on the held-out split), or undefined for a
 * name that is no suite metric.
 */
export function itemsOfMetric(metric: string): ((i: MetricItem) => boolean) | undefined {
  if (metric === LOSS_METRIC) return (i) => i.grader === LOSS_GRADER;
  if (metric === 'exact_match') return (i) => i.grader === 'exact_token';
  if (metric === 'pass_rate' || metric === 'accuracy') return graded;
  if (metric.startsWith(GRADER_PREFIX) && metric.length > GRADER_PREFIX.length) {
    const kind = metric.slice(GRADER_PREFIX.length);
    return (i) => graded(i) && i.grader === kind;
  }
  if (metric.startsWith(CATEGORY_PREFIX) && metric.length > CATEGORY_PREFIX.length) {
    const category = metric.slice(CATEGORY_PREFIX.length);
    return (i) => graded(i) && i.category === category;
  }
  return undefined;
}

/**
 * The metric names a suite reports on a split (the public one by default: selection reads it), in a stable order:
 * pass_rate, accuracy, exact_match, bits_per_byte, then categories and grader kinds by name.
 */
export function metricsOf(items: readonly (MetricItem & { split: string })[], opts: { split?: string } = {}): string[] {
  const split = opts.split ?? 'public';
  const mine = items.filter((i) => i.split === split);
  const scored = mine.filter(graded);
  const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
  return [
    ...(scored.length > 0 ? ['pass_rate', 'accuracy'] : []),
    ...(scored.some((i) => i.grader === 'exact_token') ? ['exact_match'] : []),
    ...(mine.some((i) => i.grader === LOSS_GRADER) ? [LOSS_METRIC] : []),
    ...sorted(scored.map((i) => i.category)).map((c) => CATEGORY_PREFIX + c),
    ...sorted(scored.map((i) => i.grader)).map((g) => GRADER_PREFIX + g),
  ];
}

/**
 * A split's metrics from its graded items' outcomes: the means above, plus the counts the eval records beside them
 * (`grader_errors`, `canary_hits`, `heldout_canary_hits`). `bits_per_byte` comes from the loss scorer, which weighs
 * items by their bytes, and is copied as given. Loss items among `items` are ignored.
 */
export function computeMetrics(items: readonly ScoredItem[], bitsPerByte?: number): Record<string, number> {
  const metrics: Record<string, number> = {};
  const scored = items.filter(graded);
  if (scored.length > 0) {
    const groups = new Map<string, number[]>();
    const add = (name: string, score: number) => {
      const list = groups.get(name);
      if (list) list.push(score);
      else groups.set(name, [score]);
    };
    for (const i of scored) {
      add('pass_rate', i.score);
      if (i.grader === 'exact_token') add('exact_match', i.score);
      add(GRADER_PREFIX + i.grader, i.score);
      add(CATEGORY_PREFIX + i.category, i.score);
    }
    for (const [name, scores] of groups) metrics[name] = scores.reduce((s, x) => s + x, 0) / scores.length;
    metrics.accuracy = metrics.pass_rate;
    metrics.grader_errors = scored.filter((i) => i.error).length;
    metrics.canary_hits = scored.filter((i) => i.canaryHit).length;
    metrics.heldout_canary_hits = scored.filter((i) => i.heldoutCanaryHit).length;
  }
  if (bitsPerByte !== undefined) metrics[LOSS_METRIC] = bitsPerByte;
  return metrics;
}

/**
 * The one-line refusal of a metric name a suite does not report, or undefined when it does. `field` is where the
 * name was written (`selection.metric`), `suite` the suite's id.
 */
export function unreportedMetricProblem(field: string, metric: string, suite: string, valid: readonly string[]): string | undefined {
  if (valid.includes(metric)) return undefined;
  return `${field}: "${metric}" is not a metric suite "${suite}" reports; valid: ${valid.join(', ') || '(none: the suite has no public items)'}`;
}
