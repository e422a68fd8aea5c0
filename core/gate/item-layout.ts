// How the gate weighs and groups its paired held-out items, stated once for the test, the noise bar and the means it
// reports. Weighting: bits per byte is the suite's byte-weighted figure (the loss scorer divides total bits by total
// reference bytes), so the gate's test and its means of `bits_per_byte` weigh each loss item by its reference's UTF-8
// bytes too; every other metric is a share of items passed, one item one vote. Clusters: items cut from one source
// file (eval_items.source_file) share their text's quirks, so with `clusterBy: source` they count as one unit of
// evidence (core/gate/paired-test.ts clusterDeltas); an item without a source is its own cluster. `auto` clusters by
// source when the items name at least two distinct files (one name on every item, as the arithmetic task's generator,
// says nothing about which items are alike), else by item. The default is the task's (core/task.ts itemClusters).
import { LOSS_METRIC } from '../eval-suite/suite-metrics';
import type { ItemLayout } from './paired-test';

/** `bytes`: each item weighs its reference's UTF-8 bytes; `items`: every item weighs 1. */
export type Weighting = 'bytes' | 'items';
/**
 * `source`: items that share a non-empty source file are flipped and resampled together; `item`: each alone; `auto`:
 * `source` when the items name at least two distinct source files, else `item`.
 */
export type ClusterBy = 'source' | 'item' | 'auto';

/** What the layout reads of a paired item: numbers and a file name, never text. */
export interface LaidOutItem {
  /** The source file the item was cut from ('' or absent: none). */
  cluster?: string;
  /** The reference's UTF-8 bytes: the item's weight in a byte-weighted mean. */
  bytes?: number;
}

export interface PairedLayout extends ItemLayout {
  weighting: Weighting;
  /** G: the clusters the test flips (the items' count when each is its own). */
  clusterCount: number;
  /** The distinct source files the items were cut from (0: none named), whatever `clusterBy` is: the record's caveat. */
  sourceCount: number;
}

/** The weighting a metric's figure uses: bytes for bits per byte, items for every share of items passed. */
export const weightingOf = (metric: string): Weighting => (metric === LOSS_METRIC ? 'bytes' : 'items');

/**
 * The weights and clusters of `items` for `metric` (no `clusterBy`: each item alone, as where no task is known). Bits per byte whose items do not all carry a positive byte count
 * (a suite scored before byte counts were read) falls back to items, and the layout says so by its `weighting`.
 */
export function layoutOf(items: readonly LaidOutItem[], metric: string, clusterBy: ClusterBy = 'item'): PairedLayout {
  const byBytes = weightingOf(metric) === 'bytes' && items.length > 0 && items.every((i) => (i.bytes ?? 0) > 0);
  const sources = new Set(items.flatMap((i) => (i.cluster ? [i.cluster] : []))).size;
  const sourced = clusterBy === 'source' ? sources > 0 : clusterBy === 'auto' && sources >= 2;
  // An item without a source gets a key no file name can take (a NUL never appears in a path).
  const clusters = sourced ? items.map((i, k) => (i.cluster ? `file:${i.cluster}` : `\u0000item:${k}`)) : undefined;
  return {
    weighting: byBytes ? 'bytes' : 'items',
    ...(byBytes ? { weights: items.map((i) => i.bytes!) } : {}),
    ...(clusters ? { clusters } : {}),
    clusterCount: clusters ? new Set(clusters).size : items.length,
    sourceCount: sources,
  };
}

/** The mean of `values` under `layout`'s weights (the plain mean without them). */
export function weightedMean(values: readonly number[], layout: ItemLayout): number {
  const w = layout.weights;
  let s = 0;
  let total = 0;
  values.forEach((v, i) => {
    const x = w ? w[i] : 1;
    s += x * v;
    total += x;
  });
  return total > 0 ? s / total : 0;
}
