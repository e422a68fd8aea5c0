// The promotion gate of the outer loop: a list of checks over held-out evidence. A candidate is promoted only
// when every check passes; each check states its rule, its figures and its reason, and all of them are
// recorded. Adding a check (the eval-integrity probes, the public/held-out gap) is adding one function.
import { higherIsBetter } from '../eval-suite/suite-metrics';
import { clusterDeltas, orientedDeltas, pairedTest } from './paired-test';
import { layoutOf, weightedMean } from './item-layout';
import { INTEGRITY_CHECKS } from './integrity-checks';
import { pairedTestAtLevel } from './test-at-level';
import { heldoutAboveNoise } from './noise-check';
import { noCategoryRegression } from './category-regression';
import type { GateMetric } from './settings';
import type { CheckResult, GateCheck, GateEvidence } from './evidence';

/**
 * The metrics the gate pairs held-out items for: its own metric, the two built-in families (`bits_per_byte`,
 * `exact_match`), and `pass_rate` beside a narrower metric (one grader kind or one category), so that the
 * per-category regression check covers every graded item whatever the primary metric is.
 */
export function pairedMetricsOf(primary: GateMetric): GateMetric[] {
  const builtin = ['bits_per_byte', 'exact_match'];
  const covering = primary === 'accuracy' || primary === 'pass_rate' || builtin.includes(primary) ? [] : ['pass_rate'];
  return [...new Set([primary, ...builtin, ...covering])];
}

export interface GateOutcome {
  promote: boolean;
  /** The first failing check's rule, or `ALL_CHECKS_PASSED`. */
  rule: string;
  reason: string;
  results: CheckResult[];
  /** Not promoted, but every failing check asks to hold the candidate for a researcher rather than reject it. */
  hold: boolean;
}

export const ALL_CHECKS_PASSED = 'allChecksPassed';
export { noCategoryRegression };

const f4 = (x: number) => x.toFixed(4);
const round = (x: number) => Math.round(x * 1e6) / 1e6;

/**
 * What the p-value assumes when items cut from fewer source files than there are items are paired one by one
 * (`clusterBy: item`): said in the reason, so nobody reads the p as if the items were independent draws.
 */
function independenceCaveat(items: number, units: number, sources: number): string {
  if (units !== items || sources === 0 || sources >= items) return '';
  return ` (cut from ${sources} source files, counted as independent items: promotion.clusterBy: source flips each file as one)`;
}

/**
 * A sign-flip over G units can give no p below 2^-G: when that is not below the gate's level, no candidate could pass
 * on this suite, and the reason says so (a suite cut from too few source files for `clusterBy: source`).
 */
function powerCaveat(test: string, units: number, level: number): string {
  if (test !== 'sign-flip' || units === 0 || 2 ** -units < level) return '';
  return ` (the least p a sign-flip over ${units} units can give is 2^-${units} = ${f4(2 ** -units)}, not below ${level.toPrecision(3)}: this suite cannot show an improvement; it needs items from more source files)`;
}

/** The primary metric improves by at least `margin` and the paired test is significant at `alpha`. */
export const heldoutImprovement: GateCheck = (e) => {
  const { metric, margin, alpha } = e.settings;
  const rule = 'heldoutImprovement';
  const items = e.items[metric] ?? [];
  if (items.length === 0) {
    return {
      rule,
      passed: false,
      reason: `no held-out ${metric} scores for both checkpoints: nothing shows an improvement`,
      figures: { metric, n: 0 },
    };
  }
  // One value per cluster (items of one source file flip together), items weighed as the metric's figure weighs them.
  const layout = layoutOf(items, metric, e.settings.clusterBy);
  const deltas = clusterDeltas(
    orientedDeltas(
      items.map((i) => i.candidate),
      items.map((i) => i.incumbent),
      higherIsBetter(metric),
    ),
    layout,
  );
  // With α-spending the test is held to this gate's level α_t, and the margin to Thresholdout's answer (heldout-budget.ts).
  const granted = e.heldoutBudget;
  const level = granted?.alpha?.level ?? alpha;
  const t = granted?.alpha ? pairedTestAtLevel(deltas, e.settings, level) : pairedTest(deltas, e.settings);
  const gain = granted?.answer?.answer ?? t.meanDelta;
  const bigEnough = gain >= margin;
  const significant = t.pValue < level;
  const figures = {
    metric,
    n: items.length,
    clusters: layout.clusterCount,
    sources: layout.sourceCount,
    weighting: layout.weighting,
    candidateMean: round(
      weightedMean(
        items.map((i) => i.candidate),
        layout,
      ),
    ),
    incumbentMean: round(
      weightedMean(
        items.map((i) => i.incumbent),
        layout,
      ),
    ),
    meanDelta: round(t.meanDelta),
    margin,
    test: t.test,
    pValue: round(t.pValue),
    alpha,
    lowerBound: round(t.lowerBound),
    resamples: t.resamples,
    exact: t.exact ? 'yes' : 'no',
    ...(granted?.alpha ? { level: granted.alpha.level, significant: significant ? 'yes' : 'no' } : {}),
    ...(granted?.answer ? { claimedDelta: round(gain), answeredFrom: granted.answer.answeredFrom } : {}),
  };
  const claimed = granted?.answer ? `, claimed ${f4(gain)} (answered from ${granted.answer.answeredFrom})` : '';
  const levelText = granted?.alpha ? `α_${granted.alpha.index} ${level.toPrecision(3)} of campaign alpha ${alpha}` : `alpha ${alpha}`;
  const stated = `held-out ${metric} improves by ${f4(t.meanDelta)}${claimed} (margin ${margin}), ${t.test} p = ${f4(t.pValue)} (${levelText}) over ${items.length} items${t.n === items.length ? '' : ` in ${t.n} clusters`}${independenceCaveat(items.length, t.n, layout.sourceCount)}${significant ? '' : powerCaveat(t.test, t.n, level)}`;
  const why =
    !bigEnough && !significant
      ? 'below the margin and not significant'
      : !bigEnough
        ? 'below the margin'
        : !significant
          ? 'not significant: within noise'
          : 'passes';
  return { rule, passed: bigEnough && significant, reason: `${stated}: ${why}`, figures };
};

/** The held-out checks (the gain against the gate's own noise: core/gate/noise-check.ts), then the hacking guard's (core/gate/integrity-checks.ts). */
export const DEFAULT_CHECKS: readonly GateCheck[] = [heldoutImprovement, heldoutAboveNoise, noCategoryRegression, ...INTEGRITY_CHECKS];

/**
 * Runs every check (so every figure is recorded) and promotes only when all pass; the reason names the first failure.
 * When every failing check is one the settings hold (`heldoutOutrun: hold`), the outcome holds instead of rejecting.
 */
export function runGate(evidence: GateEvidence, checks: readonly GateCheck[] = DEFAULT_CHECKS): GateOutcome {
  if (checks.length === 0) throw new RangeError('the promotion gate needs at least one check');
  const results = checks.map((check) => check(evidence));
  const failed = results.filter((r) => !r.passed);
  if (failed.length > 0) {
    const hold = failed.every((r) => r.hold === true);
    return {
      promote: false,
      hold,
      rule: failed[0].rule,
      reason: `${hold ? 'held' : 'rejected'} by ${failed[0].rule}: ${failed[0].reason}`,
      results,
    };
  }
  const who = `${evidence.candidateCheckpointId} over ${evidence.incumbentCheckpointId}`;
  return {
    promote: true,
    hold: false,
    rule: ALL_CHECKS_PASSED,
    reason: `promoted ${who}: ${results.map((r) => `${r.rule}: ${r.reason}`).join('; ')}`,
    results,
  };
}
