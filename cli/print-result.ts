// The end-of-loop summary: held-out before (untrained) and after (the winner) for the metric the campaign selects on,
// in its direction, then the task's other summary metrics (services/task-registry.ts summaryMetricsOfSpec), and the
// winning configuration.
import type { InnerLoopResult } from '../contracts/inner-loop';
import type { SummaryMetric } from '../core/task';
import { formatParams } from './progress-view';

/** One held-out line, untrained → winner; undefined when either figure is missing. */
export function heldoutLine(r: Pick<InnerLoopResult, 'heldout'>, m: SummaryMetric): string | undefined {
  const before = r.heldout.baseline?.[m.metric];
  const after = r.heldout.best?.[m.metric];
  if (before === undefined || after === undefined) return undefined;
  const better = m.lowerIsBetter ? after < before : after > before;
  return `  ${m.metric.padEnd(14)} ${before.toFixed(4)} → ${after.toFixed(4)}${m.unit ? ` ${m.unit}` : ''}  (${better ? 'better' : 'not better'})`;
}

/** Whether the winner beats the untrained model on held-out, on the first summary metric (the selection metric). */
export function heldoutImproved(r: Pick<InnerLoopResult, 'heldout'> | undefined, m: SummaryMetric): boolean {
  const before = r?.heldout.baseline?.[m.metric];
  const after = r?.heldout.best?.[m.metric];
  if (before === undefined || after === undefined) return false;
  return m.lowerIsBetter ? after < before : after > before;
}

export function formatResult(r: InnerLoopResult, metrics: readonly SummaryMetric[]): string {
  const lines = metrics.map((m) => heldoutLine(r, m)).filter((l): l is string => l !== undefined);
  return [
    `inner loop ${r.innerLoopId}: ${r.experiments} experiments, stopped by ${r.stoppedBy}${r.budgetExceeded ? ` (${r.budgetExceeded})` : ''}`,
    r.best
      ? `winner ${r.best.experimentId}  public ${r.best.publicScore.toFixed(4)}\n  config: ${formatParams(r.best.params)}`
      : 'no experiment succeeded',
    ...(lines.length > 0 ? ['held-out (untrained → winner):', ...lines] : []),
  ]
    .filter(Boolean)
    .join('\n');
}
