// The per-category regression bound: no category's mean, on any metric the gate pairs, may get worse by more than
// `maxCategoryRegression`. Measured twice: against the incumbent (one step's loss) and against the category anchor
// (core/gate/category-anchor.ts: a fixed reference, so that the steps' losses cannot add up past the bound unseen).
// Means weigh items as the metric's own figure does (core/gate/item-layout.ts: bytes for bits per byte).
import { higherIsBetter } from '../eval-suite/suite-metrics';
import { layoutOf, weightedMean } from './item-layout';
import { boundOf, type GateMetric } from './settings';
import type { GateCheck, PairedItem } from './evidence';

const f4 = (x: number) => x.toFixed(4);
const round = (x: number) => Math.round(x * 1e6) / 1e6;
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** No category's mean, on any metric with held-out scores, gets worse by more than `maxCategoryRegression`, against the incumbent or the anchor. */
export const noCategoryRegression: GateCheck = (e) => {
  const rule = 'noCategoryRegression';
  const figures: Record<string, number | string> = {};
  const failures: string[] = [];
  let worst: { metric: GateMetric; category: string; regression: number; against: string } | undefined;
  // The anchor is a comparison of its own only when it is not the incumbent.
  const anchor = e.anchor && e.anchor.checkpointId !== e.incumbentCheckpointId ? e.anchor : undefined;
  // The two built-in families first, as before metrics were open, then any other by name: a stable order of figures.
  const rank = (m: string) => ['bits_per_byte', 'exact_match'].indexOf(m) >>> 0;
  const metrics = Object.keys(e.items).sort((a, b) => rank(a) - rank(b) || byName(a, b));
  for (const metric of metrics) {
    const items = e.items[metric];
    if (!items?.length) continue;
    const bound = boundOf(e.settings.maxCategoryRegression, metric);
    const higher = higherIsBetter(metric);
    const gain = (c: number, than: number) => (higher ? c - than : than - c);
    const byCategory = new Map<string, PairedItem[]>();
    for (const i of items) {
      const list = byCategory.get(i.category);
      if (list) list.push(i);
      else byCategory.set(i.category, [i]);
    }
    for (const [category, members] of [...byCategory].sort(([a], [b]) => byName(a, b))) {
      const layout = layoutOf(members, metric, 'item');
      const delta = weightedMean(
        members.map((i) => gain(i.candidate, i.incumbent)),
        layout,
      );
      const anchored = anchor && members.every((i) => i.anchor !== undefined);
      const anchorDelta = anchored
        ? weightedMean(
            members.map((i) => gain(i.candidate, i.anchor!)),
            layout,
          )
        : undefined;
      const gated = members.length >= e.settings.minCategoryItems;
      figures[`${metric}.${category}.delta`] = round(delta);
      if (anchorDelta !== undefined) figures[`${metric}.${category}.anchorDelta`] = round(anchorDelta);
      figures[`${metric}.${category}.n`] = members.length;
      if (!gated) continue;
      const against: [string, number][] = [['the incumbent', delta]];
      if (anchorDelta !== undefined) against.push([`the anchor ${anchor!.checkpointId}`, anchorDelta]);
      for (const [who, d] of against) {
        if (!worst || -d > worst.regression) worst = { metric, category, regression: -d, against: who };
        const than = who === 'the incumbent' ? '' : ` than ${who}`;
        if (-d > bound)
          failures.push(
            `category "${category}" is worse on held-out ${metric}${than} by ${f4(-d)} (bound ${bound}, ${members.length} items)`,
          );
      }
    }
  }
  if (worst) Object.assign(figures, { worstMetric: worst.metric, worstCategory: worst.category, worstRegression: round(worst.regression) });
  figures.minCategoryItems = e.settings.minCategoryItems;
  Object.assign(figures, anchorFigures(e));
  if (failures.length > 0) return { rule, passed: false, reason: failures.join('; '), figures };
  const reason = worst
    ? `no category regresses past its bound (worst: "${worst.category}" on ${worst.metric}, ${f4(worst.regression)} against ${worst.against})`
    : `no category has ${e.settings.minCategoryItems} or more held-out items: nothing to gate`;
  return { rule, passed: true, reason, figures };
};

/** Which anchor the bound used, where from, and why the incumbent stands in when it does. */
function anchorFigures(e: Parameters<GateCheck>[0]): Record<string, string> {
  if (!e.anchor) return {};
  return {
    anchor: e.anchor.checkpointId,
    anchorSource: e.anchor.source,
    ...(e.anchor.fallback ? { anchorFallback: e.anchor.fallback } : {}),
  };
}
