// Loss weights per category from the production model's per-category eval results: a category the model does
// worse on than its average weighs more in the next dataset version, within stated bounds. Pure.

export interface CategoryScore {
  category: string;
  /** Mean per-item score of the category. */
  mean: number;
  items: number;
}

export interface LossWeightBounds {
  min: number;
  max: number;
}

/**
 * `weight(c) = clamp(badness(c) / mean badness, min, max)`, rounded to 3 decimals, where badness is the score itself
 * when lower is better (bits per byte) and `1 - score` when higher is better (a share right). The mean is over
 * items, so a large category is not outvoted by small ones. Categories whose badness the mean cannot scale (all
 * perfect) weigh 1.
 */
export function lossWeightsFromScores(scores: CategoryScore[], higherIsBetter: boolean, bounds: LossWeightBounds): Record<string, number> {
  const badness = (s: CategoryScore) => (higherIsBetter ? 1 - s.mean : s.mean);
  const items = scores.reduce((a, s) => a + s.items, 0);
  const mean = items === 0 ? 0 : scores.reduce((a, s) => a + badness(s) * s.items, 0) / items;
  const out: Record<string, number> = {};
  for (const s of [...scores].sort((a, b) => (a.category < b.category ? -1 : 1))) {
    const w = mean > 0 ? badness(s) / mean : 1;
    out[s.category] = Math.round(Math.min(bounds.max, Math.max(bounds.min, w)) * 1000) / 1000;
  }
  return out;
}

/**
 * How many times an example of expected multiplicity `m` appears in the training text: `floor(m)`, plus one more
 * when the example's own uniform draw `u` (from its content hash, so the same version is always the same text) is
 * below the fraction. In expectation this is `m`: resampling is how a trainer that reads plain text honours both
 * mixing and loss weights.
 */
export function repetitions(m: number, u: number): number {
  const whole = Math.floor(m);
  return whole + (u < m - whole ? 1 : 0);
}

/** A uniform number in [0, 1) from the first 8 hex digits of a (sha256) content hash. */
export function uniformOf(hash: string): number {
  return parseInt(hash.slice(0, 8), 16) / 0x1_0000_0000;
}
