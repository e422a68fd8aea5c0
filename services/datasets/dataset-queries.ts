// What `flywheel dataset list` and `flywheel dataset show` read: the registered datasets (no campaign) with their
// newest version, and one version with its counts per category, a few of its train.jsonl lines and its lineage.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { TRAIN_EXAMPLES_FILE } from '../../core/dataset/example-line';
import { NotFoundError, UsageError } from '../../core/errors';
import type { Db } from '../../db/client';
import { one, rows } from '../queries/run-query';
import { isDatasetName } from './register-dataset';

export interface DatasetListRow {
  name: string;
  versions: number;
  newest_version: string | null;
  examples: number;
  created_at: Date;
}

/** Registered datasets, newest first; examples are the newest version's. */
export const listDatasets = (db: Db, limit = 200): Promise<DatasetListRow[]> =>
  rows<DatasetListRow>(
    db,
    `SELECT d.name, d.created_at, (SELECT count(*)::int FROM dataset_versions v WHERE v.dataset_id = d.id) AS versions,
       n.id AS newest_version,
       coalesce((SELECT sum(value::numeric)::int FROM jsonb_each_text(n.counts_by_source)), 0) AS examples
     FROM datasets d
     LEFT JOIN LATERAL (SELECT id, counts_by_source FROM dataset_versions v WHERE v.dataset_id = d.id
                        ORDER BY v.created_at DESC, v.id LIMIT 1) n ON true
     WHERE d.campaign_id IS NULL ORDER BY d.created_at DESC, d.name LIMIT $1`,
    [limit],
  );

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
  const v = await one<{
    id: string;
    dataset_id: string;
    campaign_id: string | null;
    created_at: Date;
    content_hash: string;
    path: string;
    counts_by_source: Record<string, number>;
    parent_ids: string[];
  }>(
    db,
    `SELECT v.id, v.dataset_id, d.campaign_id, v.created_at, v.content_hash, v.path, v.counts_by_source, v.parent_ids
     FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id
     WHERE ${at < 0 ? 'v.dataset_id = $1' : 'v.id = $1'} ORDER BY v.created_at DESC, v.id LIMIT 1`,
    [ref],
  );
  if (!v)
    throw new NotFoundError(
      at < 0 ? `no dataset "${ref}": \`flywheel dataset add ${ref} FILE.jsonl\` registers one` : `no dataset version "${ref}"`,
    );
  const categories = await rows<{ category: string; n: number }>(
    db,
    'SELECT category, count(*)::int AS n FROM examples WHERE dataset_version_id = $1 GROUP BY category ORDER BY category',
    [v.id],
  );
  const children = await rows<{ id: string }>(
    db,
    'SELECT id FROM dataset_versions WHERE parent_ids @> jsonb_build_array($1::text) ORDER BY created_at, id',
    [v.id],
  );
  return {
    versionId: v.id,
    dataset: v.dataset_id,
    campaignId: v.campaign_id,
    createdAt: v.created_at,
    contentHash: v.content_hash,
    path: v.path,
    countsBySource: v.counts_by_source,
    byCategory: Object.fromEntries(categories.map((c) => [c.category, c.n])),
    examples: categories.reduce((a, c) => a + c.n, 0),
    sample: await firstLines(path.join(v.path, TRAIN_EXAMPLES_FILE), SAMPLE_LINES),
    parents: v.parent_ids,
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
