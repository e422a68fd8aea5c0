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
export function shouldPrune(
  rule: MedianRule,
  current: { step: number; value: number },
  peers: number[],
): { prune: boolean; median?: number } {
  if (current.step < rule.warmupSteps || peers.length < rule.minCompleted) return { prune: false };
  const m = median(peers);
  return { prune: current.value > m, median: m };
}

/** One peer run's curve of the pruned metric, steps ascending. */
export type PeerCurve = readonly (readonly [step: number, value: number])[];

/**
 * Each peer's value at the largest step not after `step` (peers with no point that early are left out): the
 * comparison set of `shouldPrune` at that step.
 */
export function peerValuesAt(curves: readonly PeerCurve[], step: number): number[] {
  const out: number[] = [];
  for (const c of curves) {
    let lo = 0;
    let hi = c.length - 1;
    let at = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (c[mid][0] <= step) [at, lo] = [mid, mid + 1];
      else hi = mid - 1;
    }
    if (at >= 0) out.push(c[at][1]);
  }
  return out;
}

/**
 * The median rule applied to every logged point in order, not to whichever point was newest when the metrics were
 * read: with a fixed peer set, the verdict (prune or not, and at which step) is the same however fast the run or
 * its reader went. Returns the first point where the run is worse than the median, or undefined.
 */
export function firstPrunedStep(
  rule: MedianRule,
  points: readonly { step: number; value: number }[],
  curves: readonly PeerCurve[],
): { step: number; value: number; median: number; peers: number } | undefined {
  for (const p of points) {
    if (p.step < rule.warmupSteps) continue;
    const peers = peerValuesAt(curves, p.step);
    const v = shouldPrune(rule, p, peers);
    if (v.prune) return { step: p.step, value: p.value, median: v.median!, peers: peers.length };
  }
  return undefined;
}
