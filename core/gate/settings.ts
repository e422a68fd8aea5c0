// The promotion gate's settings: how much better a candidate must be on the held-out split, how sure the
// paired test must be, and how far any one category may slip. The campaign spec embeds `gateSettingsSchema`
// as `promotion:`; a workflow carries the parsed (complete) settings, which are small.
import { z } from 'zod';
import { higherIsBetter } from '../eval-suite/suite-metrics';
import { InvalidSpecError, formatIssues } from '../spec-errors';
import type { AlphaSpendingSettings } from './alpha-spending';
import type { HeldoutBudgetSettings } from './reusable-holdout';
import type { ClusterBy } from './item-layout';

/**
 * A metric the gate reads from `evalResults.perItem`: any metric the suite reports (core/eval-suite/suite-metrics.ts);
 * its per-item scores are those of the held-out items the metric is made of.
 */
export type GateMetric = string;

/**
 * A bound per metric: `bits_per_byte` and `exact_match` always have one; any other metric may be named. A metric not
 * named takes `bits_per_byte`'s bound when it is a loss (lower-is-better) metric, else `exact_match`'s: every
 * higher-is-better metric (pass_rate, grader.<kind>, category.<name>) is, like exact match, a share of items passed.
 */
export interface MetricBounds {
  bits_per_byte: number;
  exact_match: number;
  [metric: string]: number;
}

/** The bound that applies to `metric` (see MetricBounds). */
export function boundOf(bounds: MetricBounds, metric: GateMetric): number {
  return bounds[metric] ?? (higherIsBetter(metric) ? bounds.exact_match : bounds.bits_per_byte);
}

/** The paired test the gate's p-value comes from (see core/gate/paired-test.ts for why sign-flip is the default). */
export type GateTest = 'sign-flip' | 'bootstrap';

export interface GateSettings {
  /**
   * The held-out metric the candidate must improve: any metric the suite reports, e.g. `bits_per_byte` (loss items,
   * lower is better), `exact_match` (completion items), `pass_rate`, `grader.<kind>`, `category.<name>` (higher is
   * better). Means are unweighted over items.
   * @default "bits_per_byte" for the built-in task; a custom task's selection metric
   */
  metric: GateMetric;
  /**
   * The least improvement of the mean per-item score the candidate must show over the incumbent, in the
   * metric's units (bits per byte, or a share of items for exact_match).
   * @default 0.02
   */
  margin: number;
  /**
   * One-sided significance level of the paired test (H0: the candidate is no better). With `alphaSpending` on it is the
   * campaign's target: each gate's test is held to its LORD++ level α_t, and α bounds the chance of any false promotion
   * over the campaign's gates (under the global null), not each gate's. @default 0.05
   */
  alpha: number;
  /**
   * The most any one category's mean may get worse, per metric, in that metric's units. Every metric the gate
   * pairs is checked, not just `metric`; a metric not named takes the bound of its kind (MetricBounds).
   * @default { bits_per_byte: 0.05, exact_match: 0.05 }
   */
  maxCategoryRegression: MetricBounds;
  /**
   * Categories with fewer held-out items than this are reported but not gated: the mean of a handful of
   * items moves by more than any useful bound on noise alone.
   * @default 10
   */
  minCategoryItems: number;
  /** The paired test behind the p-value. @default "sign-flip" */
  test: GateTest;
  /**
   * What the paired test and the noise check's σ_items treat as one unit of evidence: `source`, the items cut from
   * one source file (eval_items.source_file) together, their signs flipped as one; `item`, each item alone; `auto`,
   * `source` when the items name at least two distinct files, else `item`. Unset: the task's declaration (core/task.ts
   * `itemClusters`), filled in when the outer loop claims an iteration: `source` for the built-in code task (its items
   * are cut from files: at the default sizes its held-out items come from 16 files or more), `auto` for a custom task (the
   * arithmetic task's items all name one generator, so they pair as items); `item` where no task is known. The least p
   * of a cluster sign-flip is 2^-G: a decision over too few clusters says it cannot reach its level. Every decision
   * records `sources` (the distinct files), and its reason says when items from fewer files were counted as
   * independent. @default the task's `itemClusters`
   */
  clusterBy?: ClusterBy;
  /**
   * The checkpoint the per-category bound is measured against (noCategoryRegression), so that small losses cannot
   * compound across promotions. Unset: the campaign's first promoted checkpoint, or the incumbent before one.
   */
  anchor?: string;
  /** Random resamples of the paired test and of the bootstrap confidence bound. @default 2000 */
  resamples: number;
  /** Seed of the resampling, so a decision can be recomputed exactly. @default 1 */
  seed: number;
  /**
   * Hacking guard: the most the candidate's public-minus-held-out gap (in `metric`'s units, better = positive) may
   * grow over the incumbent's. A public score that rises while held-out does not is the signature of a shortcut.
   * A metric not named takes the bound of its kind (MetricBounds).
   * @default { bits_per_byte: 0.25, exact_match: 0.2 }
   */
  maxGapGrowth: MetricBounds;
  /**
   * Hacking guard: the most the candidate's share of public items passed may exceed its share of their perturbed
   * twins passed, beyond the incumbent's own difference (exact-token items).
   * @default 0.25
   */
  maxTwinGapGrowth: number;
  /**
   * Hacking guard: how many standard errors a held-out gain may exceed the public gain by before the candidate is
   * distrusted (`heldoutOutrunsPublic`). The standard error is that of the difference of the two mean gains,
   * from the per-item paired deltas of each split: σ = √(s²_heldout / n_heldout + s²_public / n_public).
   * @default 3
   */
  heldoutOutrunSigmas: number;
  /**
   * Hacking guard: what a held-out gain that outruns the public one beyond `heldoutOutrunSigmas` σ does: `reject`
   * the candidate, or `hold` it (not promoted; the outer loop waits for a researcher's `approvePromotion` with the
   * evidence, and rejects at the approval deadline). Only this check can hold; every other failure rejects.
   * @default "reject"
   */
  heldoutOutrun: HeldoutOutrunAction;
  /**
   * The gate's own noise (core/gate/noise-check.ts): a candidate must beat the incumbent by more than `sigmas` times
   * the metric's spread, σ = √(σ_seed² + σ_items²), besides the margin.
   * @default { enabled: true, seeds: 3, sigmas: 2 }
   */
  noise: NoiseSettings;
  /**
   * Held-out as a budget (core/gate/reusable-holdout.ts): the gate's gain is answered through Thresholdout, and a suite
   * version's held-out split gives at most `queries` held-out answers over all campaigns; then the gate rejects
   * (`heldoutBudgetSpent`) and asks for a new suite version. T and σ are in standard errors of the public-minus-held-out
   * difference of the mean gains.
   * @default { enabled: true, queries: 20, threshold: 3, noiseScale: 0.25 }
   */
  heldoutBudget: HeldoutBudgetSettings;
  /**
   * α-spending across the campaign's gates (core/gate/alpha-spending.ts, LORD++): the paired test of gate t is held to
   * α_t, so that `alpha` bounds the campaign's chance of any false promotion (under the global null), not each gate's.
   * @default { enabled: true, initialWealth: 0.5, decay: 1.5 }
   */
  alphaSpending: AlphaSpendingSettings;
}

export interface NoiseSettings {
  /** Check the gain against the spread at all (off: the check passes and says so). @default true */
  enabled: boolean;
  /**
   * k: reruns of the incumbent's recipe with other seeds on the iteration's dataset version, trained and scored on
   * held-out before the comparison; their held-out scores' standard deviation is σ_seed. Cached per dataset version
   * and recipe. 0 measures the spread across items only (σ_seed = 0, said in the decision). Fewer than 2 that succeed
   * leave σ_seed unmeasured (0, said in the decision).
   * @default 3
   */
  seeds: number;
  /** The multiple of σ the held-out gain must exceed. @default 2 */
  sigmas: number;
}

/** What the gate does with a held-out gain that outruns the public one. */
export type HeldoutOutrunAction = 'reject' | 'hold';

export const gateSettingsSchema = z.strictObject({
  /** The held-out metric the candidate must improve: any metric the suite reports. @default "bits_per_byte" (a custom task: its selection metric) */
  metric: z.string().min(1, 'must name a metric').default('bits_per_byte'),
  /** Least improvement of the mean per-item score, in the metric's units. @default 0.02 */
  margin: z.number().min(0).default(0.02),
  /** One-sided significance level of the paired test. @default 0.05 */
  alpha: z.number().gt(0).lt(1).default(0.05),
  /** Most any one category's mean may get worse, per metric (others: by kind). @default { bits_per_byte: 0.05, exact_match: 0.05 } */
  maxCategoryRegression: z
    .object({
      /** @default 0.05 */
      bits_per_byte: z.number().min(0).default(0.05),
      /** @default 0.05 */
      exact_match: z.number().min(0).default(0.05),
    })
    .catchall(z.number().min(0))
    .prefault({}),
  /** Categories with fewer items are reported but not gated. @default 10 */
  minCategoryItems: z.number().int().min(1).default(10),
  /** The paired test behind the p-value. @default "sign-flip" */
  test: z.enum(['sign-flip', 'bootstrap']).default('sign-flip'),
  /** One unit of evidence: the items of one source file, each item, or `auto` (source when items name ≥ 2 files). @default the task's */
  clusterBy: z.enum(['source', 'item', 'auto']).optional(),
  /** The checkpoint categories are bounded against; unset: the campaign's first promotion, else the incumbent. */
  anchor: z.string().min(1).optional(),
  /** Random resamples of the paired test and the bootstrap bound. @default 2000 */
  resamples: z.number().int().min(100).max(100_000).default(2000),
  /** Seed of the resampling. @default 1 */
  seed: z.number().int().default(1),
  /** Most the public-minus-held-out gap may grow over the incumbent's, per metric (others: by kind). @default { bits_per_byte: 0.25, exact_match: 0.2 } */
  maxGapGrowth: z
    .object({
      /** @default 0.25 */
      bits_per_byte: z.number().min(0).default(0.25),
      /** @default 0.2 */
      exact_match: z.number().min(0).default(0.2),
    })
    .catchall(z.number().min(0))
    .prefault({}),
  /** Most the public-minus-twin pass-rate gap may grow over the incumbent's. @default 0.25 */
  maxTwinGapGrowth: z.number().min(0).default(0.25),
  /** Standard errors (of held-out gain minus public gain) a held-out gain may outrun the public one by. @default 3 */
  heldoutOutrunSigmas: z.number().gt(0).default(3),
  /** A held-out gain past that bound: `reject` the candidate, or `hold` it for a researcher's approval. @default "reject" */
  heldoutOutrun: z.enum(['reject', 'hold']).default('reject'),
  /** The gate's own noise: the gain must exceed `sigmas` × √(σ_seed² + σ_items²). @default { enabled: true, seeds: 3, sigmas: 2 } */
  noise: z
    .strictObject({
      /** @default true */
      enabled: z.boolean().default(true),
      /** Seed reruns of the incumbent's recipe (σ_seed); 0: items only. @default 3 */
      seeds: z.number().int().min(0).max(20).default(3),
      /** @default 2 */
      sigmas: z.number().min(0).default(2),
    })
    .prefault({}),
  /** Held-out as a budget: Thresholdout, B answers per suite version. @default { enabled: true, queries: 20, threshold: 3, noiseScale: 0.25 } */
  heldoutBudget: z
    .strictObject({
      /** @default true */
      enabled: z.boolean().default(true),
      /** B: held-out answers per suite version, all campaigns. @default 20 */
      queries: z.number().int().min(1).default(20),
      /** T, in standard errors of the split difference. @default 3 */
      threshold: z.number().min(0).default(3),
      /** σ, in the same standard errors. @default 0.25 */
      noiseScale: z.number().gt(0).default(0.25),
    })
    .prefault({}),
  /** LORD++ levels across the campaign's gates; `alpha` is then the campaign's target. @default { enabled: true, initialWealth: 0.5, decay: 1.5 } */
  alphaSpending: z
    .strictObject({
      /** @default true */
      enabled: z.boolean().default(true),
      /** W0 as a share of alpha. @default 0.5 */
      initialWealth: z.number().gt(0).max(1).default(0.5),
      /** s of γ_j ∝ j^(−s). @default 1.5 */
      decay: z.number().gt(1).max(10).default(1.5),
    })
    .prefault({}),
});

export type GateSettingsInput = z.input<typeof gateSettingsSchema>;

// The interface above is the documented shape; this line fails to compile if the schema drifts from it.
const _sameShape: [GateSettings, z.output<typeof gateSettingsSchema>] extends [z.output<typeof gateSettingsSchema>, GateSettings]
  ? true
  : never = true;
void _sameShape;

/** Complete settings from partial ones (the `withDefaults()` step); throws InvalidSpecError on a bad value. */
export function gateSettingsWithDefaults(partial: GateSettingsInput = {}): GateSettings {
  const result = gateSettingsSchema.safeParse(partial);
  if (!result.success) throw new InvalidSpecError(formatIssues(result.error.issues), 'promotion settings');
  return result.data;
}
