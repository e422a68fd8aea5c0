// What `flywheel dataset list` and `flywheel dataset show` read: the registered datasets (no campaign) with their
// newest version, and one version with its counts per category, a few of its train.jsonl lines and its lineage.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { count, desc, eq, isNull, sql } from 'drizzle-orm';
import { TRAIN_EXAMPLES_FILE } from '../../core/dataset/example-line';
import { NotFoundError, UsageError } from '../../core/errors';
import type { Db } from '../../db/client';
import { datasets, datasetVersions, examples } from '../../db/schema';
import { isDatasetName } from './register-dataset';

export type DatasetListRow = Awaited<ReturnType<typeof listDatasets>>[number];

/** Registered datasets, newest first; examples are the newest version's. */
export function listDatasets(db: Db, limit = 200) {
  // Each dataset's newest version (a lateral subquery), for its id and its counts per source.
  const n = db
    .select({ id: datasetVersions.id, countsBySource: datasetVersions.countsBySource })
    .from(datasetVersions)
    .where(eq(datasetVersions.datasetId, datasets.id))
    .orderBy(desc(datasetVersions.createdAt), datasetVersions.id)
    .limit(1)
    .as('n');
  // The keys and their order are `flywheel dataset list --json`'s.
  return db
    .select({
      name: datasets.name,
      created_at: datasets.createdAt,
      versions: sql<number>`${db.select({ n: count() }).from(datasetVersions).where(eq(datasetVersions.datasetId, datasets.id))}`.mapWith(
        Number,
      ),
      newest_version: n.id,
      examples: sql<number>`coalesce((SELECT sum(value::numeric)::int FROM jsonb_each_text(${n.countsBySource})), 0)`.mapWith(Number),
    })
    .from(datasets)
    .leftJoinLateral(n, sql`true`)
    .where(isNull(datasets.campaignId))
    .orderBy(desc(datasets.createdAt), datasets.name)
    .limit(limit);
}

export interface DatasetVersionDetail {
  versionId: string;
  dataset: string;
  /** The campaign whose outer loop made the version; null for a registered one. */
  campaignId: string | null;
  createdAt: Date;
  contentHash: string;
  path: string;
  countsBySource: Record<string, number>;
  byCategory: Record<string, number>;
  examples: number;
  /** The first lines of its train.jsonl, each cut to {@link SAMPLE_CHARS} characters. */
  sample: string[];
  parents: string[];
  /** Versions whose parents include this one. */
  children: string[];
}

export const SAMPLE_LINES = 3;
export const SAMPLE_CHARS = 240;

/** `NAME` (its newest version), `NAME@<version>`, or any version id (a campaign's derived ones too). */
export async function showDataset(db: Db, ref: string): Promise<DatasetVersionDetail> {
  const at = ref.lastIndexOf('@');
  const name = at < 0 ? ref : ref.slice(0, at);
  if (at < 0 && !isDatasetName(name)) throw new UsageError(`dataset "${ref}": expected NAME or NAME@<version>`);
  const [v] = await db
    .select({
      id: datasetVersions.id,
      datasetId: datasetVersions.datasetId,
      campaignId: datasets.campaignId,
      createdAt: datasetVersions.createdAt,
      contentHash: datasetVersions.contentHash,
      path: datasetVersions.path,
      countsBySource: datasetVersions.countsBySource,
      parentIds: datasetVersions.parentIds,
    })
    .from(datasetVersions)
    .innerJoin(datasets, eq(datasets.id, datasetVersions.datasetId))
    .where(at < 0 ? eq(datasetVersions.datasetId, ref) : eq(datasetVersions.id, ref))
    .orderBy(desc(datasetVersions.createdAt), datasetVersions.id)
    .limit(1);
  if (!v)
    throw new NotFoundError(
      at < 0 ? `no dataset "${ref}": \`flywheel dataset add ${ref} FILE.jsonl\` registers one` : `no dataset version "${ref}"`,
    );
  const categories = await db
    .select({ category: examples.category, n: count() })
    .from(examples)
    .where(eq(examples.datasetVersionId, v.id))
    .groupBy(examples.category)
    .orderBy(examples.category);
  const children = await db
    .select({ id: datasetVersions.id })
    .from(datasetVersions)
    .where(sql`${datasetVersions.parentIds} @> jsonb_build_array(${v.id}::text)`)
    .orderBy(datasetVersions.createdAt, datasetVersions.id);
  return {
    versionId: v.id,
    dataset: v.datasetId,
    campaignId: v.campaignId,
    createdAt: v.createdAt,
    contentHash: v.contentHash,
    path: v.path,
    countsBySource: v.countsBySource,
    byCategory: Object.fromEntries(categories.map((c) => [c.category, c.n])),
    examples: categories.reduce((a, c) => a + c.n, 0),
    sample: await firstLines(path.join(v.path, TRAIN_EXAMPLES_FILE), SAMPLE_LINES),
    parents: v.parentIds,
    children: children.map((c) => c.id),
  };
}

/** The first `n` lines of a file (none when it is missing: a version from before train.jsonl existed). */
async function firstLines(file: string, n: number): Promise<string[]> {
  if (!fs.existsSync(file)) return [];
  const input = fs.createReadStream(file);
  const out: string[] = [];
  try {
    for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) {
      out.push(line.length > SAMPLE_CHARS ? `${line.slice(0, SAMPLE_CHARS)}…` : line);
      if (out.length >= n) break;
    }
  } finally {
    input.destroy();
  }
  return out;
}
