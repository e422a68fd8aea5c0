// Mixing weights that give each named source a fixed share of what training draws (spec `outerLoop.sourceShares`).
// With per-example weights a trainer draws an example in proportion to its effective weight, so a source's share of
// the training targets is its examples' summed effective weight over the version's total. Mix weights alone cannot
// hold that share: it moves with how many examples each source has, so two outer loops that derive different signals
// from the same feedback would train on different proportions of base and feedback data. Pure.

/**
 * The mix weights that realise `shares`. `weightOf[s]` is source s's summed effective weight under `mix` (its examples'
 * own weights × their categories' loss weights × `mix[s]`). Each named source present (weight above 0) is scaled to
 * exactly its share of the total; the sources not named share what is left in proportion to their weights under
 * `mix`. The total stays what it was, so the weights keep their scale (train.txt's repetitions). When no source that
 * is not named has weight, the named sources' shares are taken relative to each other. A named source that is
 * absent takes no share. Sources with no weight keep their mix weight. Rounded to 6 significant digits, so the
 * version's id is stable.
 */
export function mixForShares(
  mix: Readonly<Record<string, number>>,
  weightOf: Readonly<Record<string, number>>,
  shares: Readonly<Record<string, number>>,
): Record<string, number> {
  const present = Object.keys(weightOf).filter((s) => weightOf[s] > 0);
  const named = present.filter((s) => shares[s] !== undefined);
  const others = present.filter((s) => shares[s] === undefined);
  const total = present.reduce((a, s) => a + weightOf[s], 0);
  const rest = others.reduce((a, s) => a + weightOf[s], 0);
  let namedShare = named.reduce((a, s) => a + shares[s], 0);
  const out = { ...mix };
  if (named.length === 0 || total === 0) return out;
  // Nothing else to draw: the named shares, relative to each other, are the whole.
  const scaleNamed = rest > 0 ? 1 : namedShare > 0 ? 1 / namedShare : 0;
  if (scaleNamed === 0) return out;
  if (rest === 0) namedShare = 1;
  const round = (x: number) => Number(x.toPrecision(6));
  for (const s of named) out[s] = round(((mix[s] ?? 1) * shares[s] * scaleNamed * total) / weightOf[s]);
  for (const s of others) out[s] = round(((mix[s] ?? 1) * (1 - namedShare) * total) / rest);
  return out;
}
