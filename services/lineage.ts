// Where a checkpoint came from, read from PostgreSQL alone: its run and experiment (with the recipe commit it ran and
// the patch that made it), the dataset version it trained on (with its ancestors), and for each example or preference pair a signal builder made, the builder, the critique
// and the user feedback behind it.
import { and, asc, count, eq, inArray, isNotNull, or } from 'drizzle-orm';
import { SOURCE_OF_BUILDER } from '../core/dataset/signal-builders';
import type { Db } from '../db/client';
import {
  campaigns,
  checkpoints,
  critiques,
  datasetVersions,
  decisions,
  examples,
  experiments,
  feedbackEvents,
  innerLoops,
  trainingRuns,
  trainPairs,
} from '../db/schema';
import { experimentRecipe, type ExperimentRecipe } from './recipe-history';

export interface LineageOptions {
  /** Critique-made examples listed (a page). @default 50 */
  limit?: number;
  /** Critique-made examples skipped before the page. @default 0 */
  offset?: number;
  /** Corpus files named in the corpus summary. @default 5 */
  corpusFiles?: number;
}

export interface CritiqueLink {
  /** `builder`: the signal builder that made it (`reference`, `revision`, `critique`); null on rows from before builders. */
  example: { contentHash: string; weight: number; category: string; source: string; builder: string | null };
  /** `examples.source_ref`: the critique id. */
  critiqueId: string;
  /** Null when the critique row is gone (the example keeps its reference). */
  critique: {
    teacher: string;
    promptVersion: string;
    text: string;
    sourceKind: string;
    sourceId: string;
    outerIterationId: string | null;
  } | null;
  /** The feedback event the critique judged (and the outer iteration that ingested it); null for other source kinds or a missing event. */
  feedback: {
    id: string;
    kind: string;
    modelVersion: string;
    receivedAt: string;
    rating: number | null;
    comment: string | null;
    ingestedBy: string | null;
  } | null;
}

export interface DatasetVersionSummary {
  id: string;
  datasetId: string;
  parentIds: string[];
  contentHash: string;
  countsBySource: Record<string, number>;
  mixWeights: Record<string, number>;
  lossWeights: Record<string, number>;
  createdAt: string;
}

export interface CheckpointLineage {
  checkpoint: { id: string; step: number; format: string; sha256: string; path: string; createdAt: string };
  /** Campaigns whose production checkpoint this is. */
  inProductionFor: string[];
  run: { id: string; attempt: number; backend: string; status: string; runDir: string } | null;
  experiment: {
    id: string;
    campaignId: string;
    innerLoopId: string;
    index: number;
    status: string;
    proposer: string;
    params: Record<string, unknown>;
    publicScore: number | null;
    heldoutScore: number | null;
    /** The recipe commit it ran and the patch that made it (a campaign with trainer.recipe); null otherwise. */
    recipe: ExperimentRecipe | null;
  } | null;
  /** The checkpoint the experiment's inner loop warm-started from (its own lineage is one `flywheel lineage` away). */
  warmStartFrom: string | null;
  /** Selection, gate and approval decisions about this checkpoint, oldest first. */
  decisions: { id: string; kind: string; rule: string; accepted: boolean; reason: string; createdAt: string }[];
  /** Null when the experiment (and so its dataset version) is unknown. */
  dataset: {
    version: DatasetVersionSummary;
    /** Parents, then their parents, nearest first (each once). */
    ancestors: DatasetVersionSummary[];
    /** Missing ancestor ids (a broken chain is shown, not hidden). */
    missingAncestors: string[];
    /** Example rows of the version, per source. */
    examplesBySource: Record<string, number>;
    corpus: { count: number; files: string[] };
    critiques: { total: number; offset: number; limit: number; items: CritiqueLink[] };
    /** The version's preference pairs (pairs.jsonl), per builder, and the first `limit` with their lineage. */
    pairs: {
      total: number;
      byBuilder: Record<string, number>;
      items: {
        contentHash: string;
        builder: string;
        category: string;
        weight: number;
        critiqueId: string;
        feedbackEventId: string | null;
      }[];
    };
  } | null;
}

/** A knob experiment of a campaign without a recipe has neither commit nor patch: nothing to show. */
const recipeOrNull = (r: ExperimentRecipe | undefined): ExperimentRecipe | null => (r && (r.commit || r.patch) ? r : null);

function withDefaults(o: LineageOptions): Required<LineageOptions> {
  return { limit: 50, offset: 0, corpusFiles: 5, ...o };
}

/** The lineage of `checkpointId`, or undefined when no such checkpoint exists. */
export async function checkpointLineage(
  db: Db,
  checkpointId: string,
  options: LineageOptions = {},
): Promise<CheckpointLineage | undefined> {
  const o = withDefaults(options);
  const [ck] = await db.select().from(checkpoints).where(eq(checkpoints.id, checkpointId));
  if (!ck) return undefined;
  const [run] = await db.select().from(trainingRuns).where(eq(trainingRuns.id, ck.runId));
  const [exp] = await db.select().from(experiments).where(eq(experiments.id, ck.experimentId));
  const production = await db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(eq(campaigns.productionCheckpointId, ck.id))
    .orderBy(asc(campaigns.id));
  const [loop] = exp
    ? await db.select({ base: innerLoops.baseCheckpointId }).from(innerLoops).where(eq(innerLoops.id, exp.innerLoopId))
    : [];
  const decided = await db
    .select()
    .from(decisions)
    .where(eq(decisions.checkpointId, ck.id))
    .orderBy(asc(decisions.createdAt), asc(decisions.id));
  return {
    checkpoint: { id: ck.id, step: ck.step, format: ck.format, sha256: ck.sha256, path: ck.path, createdAt: ck.createdAt.toISOString() },
    inProductionFor: production.map((c) => c.id),
    run: run ? { id: run.id, attempt: run.attempt, backend: run.backend, status: run.status, runDir: run.runDir } : null,
    experiment: exp
      ? {
          id: exp.id,
          campaignId: exp.campaignId,
          innerLoopId: exp.innerLoopId,
          index: exp.index,
          status: exp.status,
          proposer: exp.proposer,
          params: exp.params,
          publicScore: exp.publicScore,
          heldoutScore: exp.heldoutScore,
          recipe: recipeOrNull(await experimentRecipe(db, exp.id)),
        }
      : null,
    warmStartFrom: loop?.base ?? null,
    decisions: decided.map((d) => ({
      id: d.id,
      kind: d.kind,
      rule: d.rule,
      accepted: d.accepted,
      reason: d.reason,
      createdAt: d.createdAt.toISOString(),
    })),
    dataset: exp ? await datasetLineage(db, exp.datasetVersionId, o) : null,
  };
}

async function datasetLineage(db: Db, versionId: string, o: Required<LineageOptions>): Promise<CheckpointLineage['dataset']> {
  const version = await readVersion(db, versionId);
  if (!version) return null;
  const ancestors: DatasetVersionSummary[] = [];
  const missingAncestors: string[] = [];
  const seen = new Set([version.id]);
  // Breadth first over parent ids, so a version with two parents lists both before their parents.
  for (let queue = [...version.parentIds]; queue.length;) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const v = await readVersion(db, id);
    if (!v) missingAncestors.push(id);
    else {
      ancestors.push(v);
      queue = [...queue, ...v.parentIds];
    }
  }

  const inVersion = eq(examples.datasetVersionId, versionId);
  const bySource = await db
    .select({ source: examples.source, n: count() })
    .from(examples)
    .where(inVersion)
    .groupBy(examples.source)
    .orderBy(asc(examples.source));
  const corpusFiles = await db
    .select({ ref: examples.sourceRef })
    .from(examples)
    .where(and(inVersion, eq(examples.source, 'corpus')))
    .orderBy(asc(examples.sourceRef), asc(examples.contentHash))
    .limit(o.corpusFiles);
  const examplesBySource = Object.fromEntries(bySource.map((r) => [r.source, r.n]));

  // Examples a builder made, and those from before builders (source `critique`, no builder).
  const derived = and(inVersion, or(isNotNull(examples.builder), inArray(examples.source, Object.values(SOURCE_OF_BUILDER))));
  const [{ n: derivedTotal }] = await db.select({ n: count() }).from(examples).where(derived);
  const rows = await db
    .select({
      example: {
        contentHash: examples.contentHash,
        weight: examples.weight,
        category: examples.category,
        ref: examples.sourceRef,
        source: examples.source,
        builder: examples.builder,
      },
      critique: critiques,
      feedback: feedbackEvents,
    })
    .from(examples)
    .leftJoin(critiques, eq(critiques.id, examples.sourceRef))
    .leftJoin(feedbackEvents, and(eq(critiques.sourceKind, 'feedback'), eq(feedbackEvents.id, critiques.sourceId)))
    .where(derived)
    .orderBy(asc(examples.sourceRef), asc(examples.contentHash))
    .limit(o.limit)
    .offset(o.offset);
  const items: CritiqueLink[] = rows.map(({ example: e, critique: c, feedback: f }) => ({
    example: { contentHash: e.contentHash, weight: e.weight, category: e.category, source: e.source, builder: e.builder },
    critiqueId: e.ref,
    critique: c
      ? {
          teacher: c.teacher,
          promptVersion: c.promptVersion,
          text: c.text,
          sourceKind: c.sourceKind,
          sourceId: c.sourceId,
          outerIterationId: c.outerIterationId,
        }
      : null,
    feedback: f
      ? {
          id: f.id,
          kind: f.kind,
          modelVersion: f.modelVersion,
          receivedAt: f.receivedAt.toISOString(),
          rating: f.rating,
          comment: f.comment,
          ingestedBy: f.ingestedBy,
        }
      : null,
  }));
  return {
    version,
    ancestors,
    missingAncestors,
    examplesBySource,
    corpus: { count: examplesBySource.corpus ?? 0, files: corpusFiles.map((r) => r.ref) },
    critiques: { total: derivedTotal, offset: o.offset, limit: o.limit, items },
    pairs: await pairsLineage(db, versionId, o.limit),
  };
}

async function pairsLineage(db: Db, versionId: string, limit: number): Promise<NonNullable<CheckpointLineage['dataset']>['pairs']> {
  const inVersion = eq(trainPairs.datasetVersionId, versionId);
  const byBuilder = await db
    .select({ builder: trainPairs.builder, n: count() })
    .from(trainPairs)
    .where(inVersion)
    .groupBy(trainPairs.builder)
    .orderBy(asc(trainPairs.builder));
  const rows = await db
    .select()
    .from(trainPairs)
    .where(inVersion)
    .orderBy(asc(trainPairs.sourceRef), asc(trainPairs.contentHash))
    .limit(limit);
  return {
    total: byBuilder.reduce((a, r) => a + r.n, 0),
    byBuilder: Object.fromEntries(byBuilder.map((r) => [r.builder, r.n])),
    items: rows.map((p) => ({
      contentHash: p.contentHash,
      builder: p.builder,
      category: p.category,
      weight: p.weight,
      critiqueId: p.sourceRef,
      feedbackEventId: p.lineage.feedbackEventId ?? null,
    })),
  };
}

async function readVersion(db: Db, id: string): Promise<DatasetVersionSummary | undefined> {
  const [v] = await db.select().from(datasetVersions).where(eq(datasetVersions.id, id));
  if (!v) return undefined;
  return {
    id: v.id,
    datasetId: v.datasetId,
    parentIds: v.parentIds,
    contentHash: v.contentHash,
    countsBySource: v.countsBySource,
    mixWeights: v.mixWeights,
    lossWeights: v.lossWeights,
    createdAt: v.createdAt.toISOString(),
  };
}
