// The median stopping rule (as in Vizier / Optuna's MedianPruner): a run is stopped early when its
// metric (lower is better) is worse than the median of finished runs' values at the same step.

export interface MedianRule {
  warmupSteps: number;
  minCompleted: number;
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * @param current the run's latest value and step
 * @param peers each finished run's value at the largest step not after `current.step`
 */
export function shouldPrune(rule: MedianRule, current: { step: number; value: number }, peers: number[]): { prune: boolean; median?: number } {
  if (current.step < rule.warmupSteps || peers.length < rule.minCompleted) return { prune: false };
  const m = median(peers);
  return { prune: current.value > m, median: m };
}
