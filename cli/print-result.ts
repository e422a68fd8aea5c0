// The end-of-loop summary: held-out before (untrained) and after (the winner), and the winning configuration.
import type { InnerLoopResult } from '../contracts/inner-loop';
import { formatParams } from './progress-view';

export function formatResult(r: InnerLoopResult): string {
  const b = r.heldout.baseline ?? {};
  const w = r.heldout.best ?? {};
  const row = (name: string, unit: string, lowerIsBetter: boolean) => {
    const before = b[name];
    const after = w[name];
    if (before === undefined || after === undefined) return undefined;
    const better = lowerIsBetter ? after < before : after > before;
    return `  ${name.padEnd(14)} ${before.toFixed(4)} → ${after.toFixed(4)} ${unit}  (${better ? 'better' : 'not better'})`;
  };
  return [
    `inner loop ${r.innerLoopId}: ${r.experiments} experiments, stopped by ${r.stoppedBy}${r.budgetExceeded ? ` (${r.budgetExceeded})` : ''}`,
    r.best
      ? `winner ${r.best.experimentId}  public ${r.best.publicScore.toFixed(4)}\n  config: ${formatParams(r.best.params)}`
      : 'no experiment succeeded',
    'held-out (untrained → winner):',
    row('bits_per_byte', 'bits/byte', true),
    row('exact_match', 'exact next token', false),
  ]
    .filter(Boolean)
    .join('\n');
}
