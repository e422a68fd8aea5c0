// Holm–Bonferroni: family-wise error control over m tests without assuming they are independent. The smallest p is
// held to α/m, the next to α/(m − 1), and so on until one fails; as adjusted p-values, p̃_(i) = max over j ≤ i of
// min(1, (m − j + 1) p_(j)) in ascending order, so a test is rejected at level α exactly when p̃ ≤ α.
// (Holm, "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6, 1979.)

/** The Holm-adjusted p-values, in the order given. A NaN p (a test that could not be run) stays NaN and is not counted. */
export function holmAdjust(ps: readonly number[]): number[] {
  for (const p of ps) if (!Number.isNaN(p) && !(p >= 0 && p <= 1)) throw new RangeError(`a p-value must be in [0, 1], not ${p}`);
  const order = ps
    .map((p, i) => ({ p, i }))
    .filter((x) => !Number.isNaN(x.p))
    .sort((a, b) => a.p - b.p);
  const m = order.length;
  const out = ps.map(() => NaN);
  let running = 0;
  order.forEach(({ p, i }, k) => {
    running = Math.max(running, Math.min(1, (m - k) * p));
    out[i] = running;
  });
  return out;
}
