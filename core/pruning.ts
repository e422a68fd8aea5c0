// Pruners (Optuna's BasePruner): given a run's newest intermediate values and the curves of finished runs, whether
// to stop it early, and at which point. The spec's `innerLoop.pruning.rule` chooses one by name: `median` (the
// median stopping rule, as in Vizier and Optuna's MedianPruner: stopped when its metric, lower is better, is worse
// than the median of finished runs' values at the same step), `none`, or one added with registerPruner.
import type { z } from 'zod';
import { InvalidSpecError } from './spec-errors';

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

/** One point of a run's pruned metric (lower is better). */
export interface MetricPoint {
  step: number;
  value: number;
}

/** A pruner's decision to stop a run: the point it stopped at, and why, in words (`loss 3.5 > median 3.2 of …`). */
export interface PruneVerdict {
  step: number;
  value: number;
  reason: string;
}

export interface Pruner {
  /**
   * The first of `points` at which the run should stop, or undefined to let it go on. `points` are the run's values
   * read since the last call, in step order, each judged once; `peers` are the curves of the loop's finished runs of
   * earlier batches, fixed before the run started, so the verdict does not depend on when the points were read.
   * It runs in an activity: a pure function of its arguments (no I/O, no Date, no Math.random).
   */
  prune(points: readonly MetricPoint[], peers: readonly PeerCurve[]): PruneVerdict | undefined;
}

/** The spec's `innerLoop.pruning` block, as a pruner is made from it. */
export interface PrunerConfig<O = Record<string, unknown>> {
  /** No run is pruned before this step. */
  warmupSteps: number;
  /** Finished runs needed before the rule applies. */
  minCompleted: number;
  /** The streamed metric compared. */
  metric: string;
  /** `pruning.options`, checked against the pruner's schema when the spec was parsed. */
  options: O;
}

export type PrunerFactory<O = Record<string, unknown>> = (config: PrunerConfig<O>) => Pruner;

/** The median stopping rule (`rule: median`). */
export class MedianPruner implements Pruner {
  constructor(private readonly config: PrunerConfig<unknown>) {}

  prune(points: readonly MetricPoint[], peers: readonly PeerCurve[]): PruneVerdict | undefined {
    const v = firstPrunedStep(this.config, points, peers);
    if (!v) return undefined;
    const reason = `${this.config.metric} ${v.value.toFixed(4)} > median ${v.median.toFixed(4)} of ${v.peers} finished runs of earlier batches`;
    return { step: v.step, value: v.value, reason };
  }
}

/** `rule: none` names no pruner: the run is never stopped early, and no peer curves are read. */
export const NO_PRUNER = 'none';

interface PrunerEntry {
  factory: PrunerFactory<unknown>;
  options?: z.ZodType<unknown>;
}

const pruners = new Map<string, PrunerEntry>([['median', { factory: (config) => new MedianPruner(config) }]]);
const BUILT_IN_PRUNERS = ['median'];

/**
 * Makes `name` a value of `innerLoop.pruning.rule`, with an optional schema for `pruning.options` (checked when the
 * spec is parsed and parsed again for the factory, absent options as `{}`, so defaults belong in it). Names are
 * lower-case (`[a-z][a-z0-9-]*`); registering a name twice, or `none`, is an error.
 */
export function registerPruner<O = Record<string, unknown>>(name: string, factory: PrunerFactory<O>, options?: z.ZodType<O>): void {
  if (!/^[a-z][a-z0-9-]{0,39}$/.test(name)) throw new Error(`registerPruner: ${JSON.stringify(name)} is not a pruner name`);
  if (name === NO_PRUNER || pruners.has(name)) throw new Error(`registerPruner: a pruner named "${name}" is already registered`);
  pruners.set(name, { factory, options } as PrunerEntry);
}

/** Removes a registered pruner (a test's own); the built-ins cannot be removed. */
export function unregisterPruner(name: string): void {
  if (BUILT_IN_PRUNERS.includes(name)) throw new Error(`unregisterPruner: "${name}" is built in`);
  pruners.delete(name);
}

/** The names `pruning.rule` accepts, sorted: `none` and every registered pruner. */
export function prunerNames(): string[] {
  return [NO_PRUNER, ...pruners.keys()].sort();
}

type PruningSettings = { rule: string; options?: Record<string, unknown> };

/** Spec problems with `innerLoop.pruning`, as `path: message` lines: an unknown rule or options it refuses. */
export function prunerProblems(settings: PruningSettings): string[] {
  if (settings.rule === NO_PRUNER) return settings.options === undefined ? [] : [`innerLoop.pruning.options: rule "none" takes no options`];
  const entry = pruners.get(settings.rule);
  if (!entry) return [`innerLoop.pruning.rule: unknown pruner "${settings.rule}"; registered: ${prunerNames().join(', ')}`];
  if (!entry.options)
    return settings.options === undefined ? [] : [`innerLoop.pruning.options: the ${settings.rule} pruner takes no options`];
  // Absent options are checked as {}: the options the factory will get.
  const parsed = entry.options.safeParse(settings.options ?? {});
  if (parsed.success) return [];
  return parsed.error.issues.map((i) => `${['innerLoop', 'pruning', 'options', ...i.path.map(String)].join('.')}: ${i.message}`);
}

/** The pruner `settings.rule` names, or undefined for `none`. An unknown name is the spec's error. */
export function createPruner(settings: PruningSettings & Omit<PrunerConfig, 'options'>): Pruner | undefined {
  if (settings.rule === NO_PRUNER) return undefined;
  const entry = pruners.get(settings.rule);
  if (!entry)
    throw new InvalidSpecError([`innerLoop.pruning.rule: unknown pruner "${settings.rule}"; registered: ${prunerNames().join(', ')}`]);
  const { warmupSteps, minCompleted, metric } = settings;
  // Parsed again here, so a schema's defaults reach the factory (the spec keeps the options as written).
  const options = entry.options ? entry.options.parse(settings.options ?? {}) : (settings.options ?? {});
  return entry.factory({ warmupSteps, minCompleted, metric, options });
}
