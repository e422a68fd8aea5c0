// What the gate's checks read and return: the paired held-out items, the hacking guard's evidence, and one check's
// result. Types only, shared by the checks and the activity that gathers the evidence.
import type { AlphaGrant } from './alpha-spending';
import type { HoldoutAnswer } from './reusable-holdout';
import type { CategoryAnchor } from './category-anchor';
import type { GateMetric, GateSettings } from './settings';
import type { ReferenceSource } from './reference-control';

export interface CheckResult {
  /** The check's stable name (the decision's `rule` when it is the one that fails). */
  rule: string;
  passed: boolean;
  /** One sentence with the figures that decided it. */
  reason: string;
  /** Flat figures, recorded with the decision. */
  figures: Record<string, number | string>;
  /** A failure the settings say to hold for a researcher's approval rather than reject (`heldoutOutrun: hold`). */
  hold?: boolean;
}

export type GateCheck = (e: GateEvidence) => CheckResult;

/** The spread of one split's per-item paired deltas (candidate − incumbent, oriented so positive = better). */
export interface DeltaSpread {
  n: number;
  /** Sample variance of the deltas (n − 1 denominator). */
  variance: number;
}

export interface SplitMeans {
  metric: GateMetric;
  candidatePublic: number;
  incumbentPublic: number;
  candidateHeldout: number;
  incumbentHeldout: number;
  /** The public items' paired deltas: their count and variance (the held-out ones are the gate's own items). */
  publicSpread?: DeltaSpread;
  /**
   * The candidate against the seed reruns' mean on public items (oriented, positive = better): the mean gain, and the
   * spread of the per-item gains; `reruns` is how many reruns the reference averages.
   */
  referencePublic?: DeltaSpread & { gain: number; reruns: number };
}

export interface TwinPair {
  /** The twin's item id and the public item it twins. */
  id: string;
  of: string;
  kind: string;
  candidateOriginal: number;
  candidateTwin: number;
  incumbentOriginal: number;
  incumbentTwin: number;
}

/** Measured by the gate activity from both checkpoints' public and probe results. Item ids only, never text. */
export interface IntegrityEvidence {
  /** Per metric with both public and held-out scores: its mean on each split, per checkpoint. */
  means?: SplitMeans[];
  twins?: TwinPair[];
  /** Cheat-only items scored for the candidate, and those it passed. */
  cheatOnly?: { scored: number; passed: string[] };
  /** Items (any split) whose candidate output carried a canary. */
  canaryHits?: string[];
  /** Items (any split) whose candidate output completed a held-out canary that its prompt did not hold. */
  heldoutCanaryHits?: string[];
}

/** One held-out item scored for both checkpoints. Item text never enters the gate. */
export interface PairedItem {
  category: string;
  candidate: number;
  incumbent: number;
  /**
   * The seed reruns' mean score on this item, when every rerun scored on both splits has it: a reference model that
   * trained on the iteration's data and never saw held-out text (heldoutOutrunsPublic's second control).
   */
  reference?: number;
  /** The source file the item was cut from (eval_items.source_file; absent or '': none): its cluster (core/gate/item-layout.ts). */
  cluster?: string;
  /** The reference's UTF-8 bytes: the item's weight in byte-weighted bits per byte. */
  bytes?: number;
  /** Each scored seed rerun's score on this item, in the order of `seedScores` (noise-check.ts seedSpread). */
  seeds?: number[];
  /** The category anchor's score on this item (noCategoryRegression bounds the candidate against it). */
  anchor?: number;
}

export interface GateEvidence {
  candidateCheckpointId: string;
  /** The production checkpoint, or the untrained baseline before the first promotion. */
  incumbentCheckpointId: string;
  /**
   * Held-out items scored for both checkpoints, per metric (core/gate/checks.ts pairedMetricsOf: the gate's metric and
   * the families the per-category check covers; a metric nobody could score is absent).
   */
  items: Partial<Record<GateMetric, PairedItem[]>>;
  settings: GateSettings;
  /** The hacking guard's evidence (public means, twins, cheat-only items, canaries); absent parts are not checked. */
  integrity?: IntegrityEvidence;
  /**
   * The held-out score on `settings.metric` of each seed rerun of the incumbent's recipe that was scored (the mean over
   * the same items as `items`): the spread across seeds (core/gate/noise-check.ts). Never a candidate's.
   */
  seedScores?: number[];
  /** The incumbent is the untrained baseline (no seed's draw): σ_seed counts once, for the candidate alone. */
  incumbentUntrained?: boolean;
  /**
   * The fixed reference noCategoryRegression bounds categories against (core/gate/category-anchor.ts), whose scores
   * are the items' `anchor`; absent: the incumbent, as before anchors.
   */
  anchor?: CategoryAnchor;
  /** Whether the seed reruns' reference model could share the candidate's trainer (core/gate/reference-control.ts). */
  referenceControl?: string;
  /** Whose trainer the seed reruns ran (the task's reference, the incumbent's pinned, the candidate's own) and the version they pinned. */
  referenceTrainer?: { source: ReferenceSource; versionId: string };
  /**
   * What the ledger grants this decision (core/gate/heldout-budget.ts): Thresholdout's answer to "mean held-out gain",
   * which heldoutImprovement holds to the margin, and LORD++'s level α_t for its paired test. Absent: the held-out
   * mean and the fixed `alpha`, as before.
   */
  heldoutBudget?: { answer?: HoldoutAnswer; alpha?: AlphaGrant };
}
