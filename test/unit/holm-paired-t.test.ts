// The ablation's statistics (core/stats/): Holm–Bonferroni adjusted p-values and the paired t-test, against figures
// worked by hand (Holm) and from scipy.stats.ttest_rel (the t-test).
import { holmAdjust } from '../../core/stats/holm';
import { pairedTTest } from '../../core/stats/paired-t-test';

describe('holmAdjust', () => {
  it('multiplies the k-th smallest p by m − k + 1, keeps them monotone, and answers in the order given', () => {
    // Sorted: 0.005×5 = 0.025, 0.01×4 = 0.04, 0.03×3 = 0.09, 0.04×2 = 0.08 → 0.09 (monotone), 0.5×1 = 0.5.
    const adjusted = holmAdjust([0.01, 0.04, 0.03, 0.005, 0.5]);
    [0.04, 0.09, 0.09, 0.025, 0.5].forEach((want, i) => expect(adjusted[i]).toBeCloseTo(want, 12));
  });

  it('caps at 1, leaves a NaN out of the count, and refuses a p outside [0, 1]', () => {
    expect(holmAdjust([0.6, 0.3])).toEqual([0.6, 0.6]);
    const withNaN = holmAdjust([0.02, NaN, 0.04]);
    expect(withNaN[0]).toBeCloseTo(0.04, 12);
    expect(withNaN[1]).toBeNaN();
    expect(withNaN[2]).toBeCloseTo(0.04, 12);
    expect(holmAdjust([])).toEqual([]);
    expect(() => holmAdjust([1.2])).toThrow(/\[0, 1\]/);
  });
});

describe('pairedTTest', () => {
  it('matches scipy.stats.ttest_rel', () => {
    const r = pairedTTest([0.61, 0.55, 0.7, 0.58, 0.66], [0.52, 0.57, 0.61, 0.5, 0.6]);
    expect(r.n).toBe(5);
    expect(r.df).toBe(4);
    expect(r.delta).toBeCloseTo(0.06, 12);
    expect(r.t).toBeCloseTo(2.893456933022477, 9);
    expect(r.p).toBeCloseTo(0.04440850222130656, 7);
  });

  it('has no p without spread to test against: fewer than two pairs, or every difference the same', () => {
    expect(pairedTTest([0.5], [0.4]).p).toBeNaN();
    expect(pairedTTest([0.5, 0.6], [0.4, 0.5]).p).toBeNaN();
    expect(pairedTTest([0.5, 0.6], [0.5, 0.6]).p).toBe(1);
    expect(() => pairedTTest([1, 2], [1])).toThrow(/as many/);
  });
});
