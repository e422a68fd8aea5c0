// buildDatasetVersion: one outer iteration's immutable dataset: the parent version's examples plus the examples made
// from the teacher's critiques, minus everything that overlaps an eval item (checked here, every time: each feedback
// event on its raw fields before any signal is built from it, then every built example and pair), with mixing
// weights per source and loss weights per category. The trainer reads the version's files (train.jsonl, train.txt:
// services/datasets/version-files.ts) through run.json. A version derived from a dataset a user registered (no
// campaign) belongs to the dataset `<campaignId>/<NAME>`, the campaign's own line of versions of it.
import { trainPairLine, type SignalBuilder, type TrainPair } from '../../core/dataset/example-line';
import { buildSignals, pairHashOf } from '../../core/dataset/signal-builders';
import { CONTAMINATION_THRESHOLDS } from '../../core/dataset/contamination';
import { OverlapIndex } from '../../core/dataset/overlap';
import { rawOverlapOf } from '../../core/dataset/raw-overlap';
import { FeedbackShape } from '../../core/dataset/feedback-shape';
import { mixForShares } from '../../core/dataset/source-shares';
import { NotFoundError, NonRetryableError } from '../../core/errors';
import type { TrainingSignal } from '../../core/teacher/builtin-teacher';
import { critiquesWithSources, type CritiqueWithSources } from '../../services/critiques';
import {
  allEvalItemTexts,
  datasetRow,
  examplesOfVersion,
  pairsOfVersion,
  recordChildVersion,
  versionIsRecorded,
  type NewDataset,
  type NewExample,
  type NewTrainPair,
} from '../../services/datasets/child-versions';
import { datasetVersionById } from '../../services/datasets/dataset-versions';
import type { ActivityDeps } from '../deps';
import { datasetDirOf } from '../../services/paths';
import { contentHashOf, exampleOfRow } from '../../services/datasets/example-rows';
import { trainBytesOf, versionRecord, writeVersionFiles, type VersionRecord } from '../../services/datasets/version-files';
import type { BuildDatasetVersionResult } from '../../contracts/outer-activities';

export interface BuildDatasetVersionInput {
  campaignId: string;
  parentVersionId: string;
  /** Critiques (of this campaign) whose `sft` signals become examples; an unknown id is a NotFoundError. */
  critiqueIds: string[];
  /**
   * Mixing weight per source (`corpus`, `critique`, ...). Each example appears `mix[source] * weight *
   * lossWeights[category]` times in train.txt in expectation (see `repetitions`), so a trainer that reads plain
   * text honours the mix and the loss weights (0 keeps an example in the version but out of the training text).
   * Merged over the parent's.
   * @default the parent's, and 1 for a source neither names
   */
  mix?: Record<string, number>;
  /**
   * Loss weight per example category, recorded in the version and in `version.json` for trainers that weight their
   * loss, and realised in train.txt by resampling (a category not named weighs 1). Merged over the parent's.
   * @default the parent's
   */
  lossWeights?: Record<string, number>;
  /**
   * The signal builders that derive examples and pairs from the critiques (spec `outerLoop.signals`); `[]` derives
   * nothing, so the version is its parent's examples.
   * @default ["reference"]
   */
  signals?: readonly SignalBuilder[];
  /**
   * The category of a feedback prompt by the task's teacher (spec `outerLoop.teacher.task`), asked when the event
   * named none and no parent example is near its prompt (core/dataset/feedback-shape.ts).
   */
  categoryOf?: (prompt: string) => string | undefined;
  /**
   * A fixed share of the examples' summed effective weight (what training draws) per named source (spec
   * `outerLoop.sourceShares`): the version's mix weights are set to realise it (core/dataset/source-shares.ts) and
   * recorded as its mix weights. Not merged over the parent's.
   * @default none: the mix weights as given
   */
  shares?: Record<string, number>;
}

export const MAX_REMOVED_LISTED = 100;

/** A mix or loss weight that is negative or not a number: retrying cannot help. */
export class InvalidWeightsError extends NonRetryableError {}

type ExampleRow = NewExample & { weight: number; category: string };
type PairRow = NewTrainPair & { weight: number };

/** A stored pair as its `pairs.jsonl` line reads (the effective weight is set by the caller). */
const pairOfRow = (p: PairRow): TrainPair => ({
  prompt: p.prompt,
  chosen: p.chosen,
  rejected: p.rejected,
  category: p.category,
  weight: p.weight,
  source: p.source,
  lineage: p.lineage,
});

/**
 * Builds (or finds) the version. Its id is content-addressed — `${datasetId}@` + the first 12 hex digits of a
 * sha256 over the parent id, the sorted example hashes with their source and weight, and the mix and loss weights —
 * so building twice from the same inputs yields one version. The files are written (services/datasets/version-files)
 * before the one transaction that inserts the examples and the version (ON CONFLICT DO NOTHING), so a version row
 * always has its files.
 *
 * Eval items of every suite and split (public, held-out, test, probes) are checked at the contamination check's
 * thresholds (13-character n-grams, 0.5 share), each as its prompt followed by its reference: first each feedback
 * event's raw fields (core/dataset/raw-overlap.ts), so an event that overlaps an item yields no example or pair of
 * any builder, then every example and pair of the pool as built.
 */
export async function buildDatasetVersion(deps: ActivityDeps, input: BuildDatasetVersionInput): Promise<BuildDatasetVersionResult> {
  const { db } = deps;
  const parent = await datasetVersionById(db, input.parentVersionId);
  if (!parent) throw new NotFoundError(`dataset version "${input.parentVersionId}" does not exist`);
  const mix = canonical({ ...parent.mixWeights, ...input.mix }, 'mix');
  const lossWeights = canonical({ ...parent.lossWeights, ...input.lossWeights }, 'lossWeights');

  const evals = await allEvalItemTexts(db);
  const index = new OverlapIndex(
    evals.map((e) => ({ id: e.id, text: e.prompt + e.reference })),
    CONTAMINATION_THRESHOLDS,
  );
  const pool = await poolOf(deps, parent.id, input, index);
  const removed = [...pool.droppedEvents, ...removeOverlaps(pool, index)];
  const version = keptVersion(pool, mix, lossWeights, input.shares);
  const dataset = await childDatasetOf(deps, parent.datasetId, input.campaignId);
  const versionId = `${dataset.id}@${sha256(versionKeyOf(parent.id, version)).slice(0, 12)}`;
  const result = (created: boolean) => resultOf(versionId, created, pool, version, removed);

  if (await versionIsRecorded(db, versionId)) return result(false);
  return result(await writeAndRecord(deps, versionId, parent.id, dataset, version));
}

/** The examples and pairs a version is built from, keyed by content hash, with what adding the critiques' counted. */
interface Pool {
  examples: Map<string, ExampleRow>;
  pairs: Map<string, PairRow>;
  /** The hashes of the examples the critiques added (not their parent's). */
  fromCritiques: Set<string>;
  duplicates: number;
  skippedSignals: { pair: number; none: number };
  /** The feedback events (by critique) whose raw fields overlap an eval item: nothing was built from them. */
  droppedEvents: Removed;
}

/** The parent version's examples and pairs, then those the signal builders derive from the critiques. */
async function poolOf(deps: ActivityDeps, parentId: string, input: BuildDatasetVersionInput, index: OverlapIndex): Promise<Pool> {
  const pool: Pool = {
    examples: new Map(),
    pairs: new Map(),
    fromCritiques: new Set(),
    duplicates: 0,
    skippedSignals: { pair: 0, none: 0 },
    droppedEvents: [],
  };
  const parentExamples = await examplesOfVersion(deps.db, parentId);
  for (const e of parentExamples) pool.examples.set(e.contentHash, e);
  const signals = input.signals ?? ['reference'];
  for (const p of await pairsOfVersion(deps.db, parentId)) pool.pairs.set(p.contentHash, p);
  // The parent's examples are the task's shape: the category of a feedback prompt, the completions' terminator.
  const shape = new FeedbackShape(parentExamples);
  for (const c of await loadCritiques(deps, input.campaignId, input.critiqueIds))
    addCritique(pool, c, signals, input.categoryOf, index, shape);
  return pool;
}

/**
 * Adds one critique's examples and pairs to the pool; an example already there counts as a duplicate. A feedback
 * critique whose event overlaps an eval item on its raw fields adds nothing and is recorded as dropped.
 */
function addCritique(
  pool: Pool,
  c: CritiqueWithSources,
  signals: readonly SignalBuilder[],
  categoryOf: BuildDatasetVersionInput['categoryOf'],
  index: OverlapIndex,
  shape: FeedbackShape,
): void {
  // A single signal object (another teacher's shape) is read as a list of one.
  const stored = (Array.isArray(c.signal) ? c.signal : [c.signal]) as TrainingSignal[];
  for (const s of stored) if (s.kind !== 'sft') pool.skippedSignals[s.kind]++;
  if (c.sourceKind === 'feedback') {
    const evalItemIds = rawOverlapOf(index, { event: c.event, text: c.text, signals: stored, revision: c.revision });
    if (evalItemIds.length > 0) {
      pool.droppedEvents.push({ sourceRef: c.id, evalItemIds });
      return;
    }
  }
  const built = buildSignals(
    {
      critiqueId: c.id,
      sourceKind: c.sourceKind,
      sourceId: c.sourceId,
      text: c.text,
      signals: stored,
      event: c.event,
      revision: c.revision,
      category: c.event && shape.categoryOf(c.event, categoryOf),
    },
    signals,
  );
  for (const derived of built.examples) {
    // A correction or a revision in the dataset's completion convention (its terminator), as the base data trains it.
    const x = derived.lineage.builder === 'critique' ? derived : { ...derived, completion: shape.normalise(derived.completion) };
    const content = x.prompt + x.completion;
    const contentHash = contentHashOf(content);
    if (pool.examples.has(contentHash)) {
      if (!pool.fromCritiques.has(contentHash)) pool.duplicates++;
      continue;
    }
    pool.fromCritiques.add(contentHash);
    pool.examples.set(contentHash, {
      datasetVersionId: '',
      contentHash,
      source: x.source,
      sourceRef: c.id,
      builder: x.lineage.builder,
      category: x.category,
      content,
      prompt: x.prompt,
      completion: x.completion,
      weight: x.weight,
    });
  }
  for (const x of built.pairs) {
    const contentHash = pairHashOf(x);
    if (pool.pairs.has(contentHash)) continue;
    const { lineage, ...pair } = x;
    pool.pairs.set(contentHash, { ...pair, datasetVersionId: '', contentHash, sourceRef: c.id, builder: lineage.builder, lineage });
  }
}

type Removed = { sourceRef: string; evalItemIds: string[] }[];

/** Drops from the pool every example and pair that overlaps an eval item; what was dropped, and which items it overlaps. */
function removeOverlaps(pool: Pool, index: OverlapIndex): Removed {
  // A pair is checked as two texts (prompt + chosen, prompt + rejected), keyed apart from the examples.
  const candidates = [
    ...[...pool.examples.values()].map((e) => ({ key: e.contentHash, text: e.content })),
    ...[...pool.pairs.values()].flatMap((p) => [
      { key: `pair:${p.contentHash}`, text: p.prompt + p.chosen },
      { key: `pair:${p.contentHash}`, text: p.prompt + p.rejected },
    ]),
  ];
  const overlaps = candidates.flatMap((c) => {
    const o = index.overlapOf(c.text);
    return o ? [{ key: c.key, evalIds: o.evalIds }] : [];
  });
  const removed: Removed = [];
  for (const o of overlaps) {
    const pairHash = o.key.startsWith('pair:') ? o.key.slice('pair:'.length) : undefined;
    const row = pairHash ? pool.pairs.get(pairHash) : pool.examples.get(o.key);
    if (!row) continue; // a pair's second text, already removed with its first
    removed.push({ sourceRef: row.sourceRef, evalItemIds: o.evalIds });
    if (pairHash) pool.pairs.delete(pairHash);
    else pool.examples.delete(o.key);
  }
  return removed;
}

/** What the version holds: its examples and pairs in hash order, with its counts, weights and train.jsonl records. */
interface KeptVersion {
  kept: ExampleRow[];
  keptPairs: PairRow[];
  bySource: Record<string, number>;
  mixWeights: Record<string, number>;
  lossWeights: Record<string, number>;
  /** An example's or pair's effective weight: its own × its source's mix weight × its category's loss weight. */
  effective: (e: { source: string; weight: number; category: string }) => number;
  records: VersionRecord[];
}

/**
 * The pool left after the overlap check, sorted, with a mix weight (1 unless named) for every source it holds, set to
 * realise `shares` when given.
 */
function keptVersion(
  pool: Pool,
  mix: Record<string, number>,
  lossWeights: Record<string, number>,
  shares?: Record<string, number>,
): KeptVersion {
  const kept = [...pool.examples.values()].sort((a, b) => (a.contentHash < b.contentHash ? -1 : 1));
  const keptPairs = [...pool.pairs.values()].sort((a, b) => (a.contentHash < b.contentHash ? -1 : 1));
  const bySource: Record<string, number> = {};
  for (const e of kept) bySource[e.source] = (bySource[e.source] ?? 0) + 1;
  for (const source of Object.keys(bySource)) mix[source] ??= 1;
  for (const p of keptPairs) mix[p.source] ??= 1;
  if (shares) {
    const weightOf: Record<string, number> = {};
    for (const e of kept) weightOf[e.source] = (weightOf[e.source] ?? 0) + mix[e.source] * e.weight * (lossWeights[e.category] ?? 1);
    mix = mixForShares(mix, weightOf, canonical(shares, 'shares'));
  }
  const mixWeights = canonical(mix, 'mix');
  const effective = (e: { source: string; weight: number; category: string }) =>
    mixWeights[e.source] * e.weight * (lossWeights[e.category] ?? 1);

  // Each example's effective weight: its own × its source's mix weight × its category's loss weight.
  const records = kept.map((e) => versionRecord({ ...exampleOfRow(e), weight: effective(e), source: e.source }, e.contentHash));
  return { kept, keptPairs, bySource, mixWeights, lossWeights, effective, records };
}

/** The text whose sha256 names the version. */
function versionKeyOf(parentId: string, v: KeptVersion): string {
  return JSON.stringify({
    parent: parentId,
    examples: v.kept.map((e) => `${e.contentHash}:${e.source}:${e.weight}`),
    mixWeights: v.mixWeights,
    lossWeights: v.lossWeights,
    // Only a version with pairs names them, so a version without keeps the id it had before pairs existed.
    ...(v.keptPairs.length ? { pairs: v.keptPairs.map((p) => `${p.contentHash}:${p.source}:${p.weight}`) } : {}),
  });
}

function resultOf(versionId: string, created: boolean, pool: Pool, v: KeptVersion, removed: Removed): BuildDatasetVersionResult {
  return {
    versionId,
    created,
    counts: {
      examples: v.kept.length,
      bySource: v.bySource,
      added: v.kept.filter((e) => pool.fromCritiques.has(e.contentHash)).length,
      duplicates: pool.duplicates,
      removed: removed.length,
      droppedEvents: pool.droppedEvents.length,
      skippedSignals: pool.skippedSignals,
      trainBytes: trainBytesOf(v.records),
      ...(v.keptPairs.length ? { pairs: v.keptPairs.length } : {}),
    },
    removed: removed.slice(0, MAX_REMOVED_LISTED),
  };
}

/** Writes the version's files, then records it (its dataset, examples and pairs) in one transaction; whether it inserted. */
async function writeAndRecord(
  deps: ActivityDeps,
  versionId: string,
  parentId: string,
  dataset: { id: string; insert?: NewDataset },
  v: KeptVersion,
): Promise<boolean> {
  const { bySource, mixWeights, lossWeights } = v;
  const dir = datasetDirOf(deps.home, versionId);
  const parentIds = [parentId];
  const pairLines = v.keptPairs.map((p) => trainPairLine({ ...pairOfRow(p), weight: v.effective(p) }));
  const { trainSha256: contentHash } = await writeVersionFiles(
    dir,
    v.records,
    (w) => ({
      versionId,
      parentIds,
      contentHash: w.trainSha256,
      countsBySource: bySource,
      mixWeights,
      lossWeights,
      ...(pairLines.length ? { pairs: pairLines.length } : {}),
    }),
    pairLines,
  );

  return deps.db.transaction((tx) =>
    recordChildVersion(tx, {
      dataset: dataset.insert,
      examples: v.kept.map((e) => ({ ...e, datasetVersionId: versionId, createdAt: undefined })),
      pairs: v.keptPairs.map((p) => ({ ...p, datasetVersionId: versionId, createdAt: undefined })),
      version: {
        id: versionId,
        datasetId: dataset.id,
        parentIds,
        path: dir,
        contentHash,
        countsBySource: bySource,
        mixWeights,
        lossWeights,
      },
    }),
  );
}

async function loadCritiques(deps: ActivityDeps, campaignId: string, ids: string[]): Promise<CritiqueWithSources[]> {
  const wanted = [...new Set(ids)].sort();
  const rows = await critiquesWithSources(deps.db, campaignId, wanted);
  if (rows.length < wanted.length) {
    const found = new Set(rows.map((r) => r.id));
    const missing = wanted.filter((id) => !found.has(id));
    throw new NotFoundError(
      `critiques not found in campaign "${campaignId}": ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}`,
    );
  }
  return rows.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Sorted keys (so the version id does not depend on key order); every weight finite and not negative. */
function canonical(w: Record<string, number>, what: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(w).sort()) {
    if (!Number.isFinite(w[k]) || w[k] < 0) throw new InvalidWeightsError(`${what}.${k} must be a finite number >= 0, got ${w[k]}`);
    out[k] = w[k];
  }
  return out;
}

/**
 * The dataset a child of a version of `parentDatasetId` belongs to: the parent's own when a campaign's outer loop owns
 * it, else (a dataset a user registered) `<campaignId>/<NAME>`, with the row to insert for it (the campaign's id).
 */
async function childDatasetOf(
  deps: ActivityDeps,
  parentDatasetId: string,
  campaignId: string,
): Promise<{ id: string; insert?: NewDataset }> {
  const d = await datasetRow(deps.db, parentDatasetId);
  if (!d || d.campaignId !== null) return { id: parentDatasetId };
  const id = `${campaignId}/${d.name}`;
  return { id, insert: { id, campaignId, name: d.name } };
}

const sha256 = contentHashOf;
