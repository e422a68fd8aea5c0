// The paired t-test: n pairs (a_i, b_i), d_i = a_i − b_i, t = mean(d) / (sd(d) / √n) on n − 1 degrees of freedom,
// two-sided. For a handful of replicates (task seeds, say) whose differences are roughly normal; with n < 2, or every
// difference the same, there is no spread to test against and p is NaN (or 1 when every difference is 0).
import { mean, sampleVariance } from '../gate/paired-test';
import { studentTCdf } from '../gate/student-t';

export interface PairedTTest {
  /** Pairs tested. */
  n: number;
  /** mean(a − b). */
  delta: number;
  /** The standard error of the mean difference, sd(d) / √n. */
  se: number;
  t: number;
  df: number;
  /** Two-sided p-value. */
  p: number;
}

export function pairedTTest(a: readonly number[], b: readonly number[]): PairedTTest {
  if (a.length !== b.length) throw new RangeError(`a paired test needs as many a's as b's, not ${a.length} and ${b.length}`);
  const d = a.map((x, i) => x - b[i]);
  const n = d.length;
  const delta = n ? mean(d) : NaN;
  const se = n >= 2 ? Math.sqrt(sampleVariance(d) / n) : NaN;
  const df = n - 1;
  if (!(n >= 2)) return { n, delta, se, t: NaN, df, p: NaN };
  if (se === 0) return { n, delta, se, t: delta === 0 ? 0 : Math.sign(delta) * Infinity, df, p: delta === 0 ? 1 : NaN };
  const t = delta / se;
  return { n, delta, se, t, df, p: Math.min(1, 2 * studentTCdf(-Math.abs(t), df)) };
}
