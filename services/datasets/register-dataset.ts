// registerDataset: `flywheel dataset add NAME FILE.jsonl`. Two passes over the file, each streamed in bounded memory:
//   1. every line is checked (core/dataset/example-line.ts) and the content hash is taken over the canonical lines;
//      any problem refuses the whole file (MalformedDatasetError, `FILE:LINE: field: problem` each) before anything
//      is written. So does a line the loop's contamination check would refuse for a held-out or probe item or a
//      canary of any registered suite (ContaminatedLineError, the first such line). The same content again is the
//      same version: nothing is written.
//   2. in one transaction, under a lock on the name: the lines go into a temporary table by PostgreSQL COPY, lines of
//      the same text collapse to the first, the examples go in by INSERT … SELECT, the version's files are written
//      (services/datasets/version-files.ts) from the collapsed examples, and then the version row: a row always has
//      its files. The file read twice must hash the same, else nothing is kept.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { PoolClient } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import {
  canonicalExample,
  checkExampleLine,
  exampleContent,
  MAX_EXAMPLE_LINE_BYTES,
  trainExampleLine,
  type ExampleLine,
} from '../../core/dataset/example-line';
import { ContaminationIndex } from '../../core/dataset/contamination';
import { lineContamination } from '../../core/dataset/line-contamination';
import { UsageError } from '../../core/errors';
import { DATASET_REF } from '../../core/spec';
import type { Db } from '../../db/client';
import { datasetDirOf } from '../paths';
import { contaminationSources } from '../suites/contamination-sources';
import { contentHashOf } from './example-rows';
import { readLines } from './read-lines';
import { writeVersionFiles, type VersionRecord } from './version-files';

/** A dataset's name: what a campaign's `task.dataset` names (core/spec.ts DATASET_REF), without a version. */
export function isDatasetName(name: string): boolean {
  return DATASET_REF.test(name) && !name.includes('@');
}
/** Problem lines listed before "... and N more": a wrong file should not flood the terminal. */
export const SHOWN_PROBLEMS = 20;
/** The source every example of a registered dataset has (counts_by_source, train.jsonl's `source`). */
export const USER_SOURCE = 'user';

/** A dataset file with bad lines: `problems` are the first {@link SHOWN_PROBLEMS}, `FILE:LINE: field: problem`. */
export class MalformedDatasetError extends UsageError {
  constructor(
    readonly file: string,
    readonly problems: string[],
    readonly total: number,
  ) {
    const more = total > problems.length ? [`... and ${total - problems.length} more`] : [];
    super([`${file}: ${total} problem${total > 1 ? 's' : ''}, nothing registered`, ...problems, ...more].join('\n'));
  }
}

/**
 * A line that holds a registered suite's held-out, test or probe item, or a canary: `FILE:LINE: field: overlaps held-out
 * item SUITE@N/ID (13-gram "…")` or `FILE:LINE: field: carries canary SUITE@N#canaryK`, the first such line; nothing
 * is registered.
 */
export class ContaminatedLineError extends UsageError {}

export interface RegisterProgress {
  /**
   * `check`: pass 1 (every line checked); `load`: pass 2 (the file into the database); `store`: the examples inserted
   * and the version's files written (reported once, when it starts, with every byte read).
   */
  phase: 'check' | 'load' | 'store';
  lines: number;
  /** Bytes of the file read in this phase. */
  bytes: number;
  totalBytes: number;
}

export interface RegisteredDataset {
  /** `NAME@<first 12 hex of the content hash>`. */
  versionId: string;
  /** False when a version with this content already existed: nothing was written. */
  created: boolean;
  /** Examples in the version (lines with the same text count once). */
  examples: number;
  /** Lines whose text an earlier line already had. */
  duplicates: number;
  byCategory: Record<string, number>;
}

export async function registerDataset(
  db: Db,
  name: string,
  file: string,
  opts: { home: string; onProgress?: (p: RegisterProgress) => void },
): Promise<RegisteredDataset> {
  if (!isDatasetName(name))
    throw new UsageError(`dataset name "${name}": lowercase letters, digits and ._- only, starting with a letter or digit, at most 63`);
  let totalBytes: number;
  try {
    totalBytes = fs.statSync(file).size;
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${(e as Error).message}`);
  }
  const progress =
    opts.onProgress &&
    ((phase: RegisterProgress['phase'], lines: number, bytes: number) => opts.onProgress!({ phase, lines, bytes, totalBytes }));

  // The index lives for pass 1 only: a large one would otherwise be marked by every collection of pass 2.
  const checked = await checkFile(file, await registrationIndex(db, name), progress && ((lines, bytes) => progress('check', lines, bytes)));
  const versionId = `${name}@${checked.contentHash.slice(0, 12)}`;
  const found = await existing(db.$client, versionId, checked.lines);
  if (found) return found;

  const client = await db.$client.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    // One registration of a name at a time: a second one of the same content waits, then finds the version.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`dataset:${name}`]);
    const raced = await existing(client, versionId, checked.lines);
    if (raced) {
      await client.query('ROLLBACK');
      return raced;
    }
    const result = await load(client, name, file, versionId, checked, opts.home, progress);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    broken = e as Error;
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    // A connection whose COPY failed half-way is not handed back to the pool.
    client.release(broken);
  }
}

/**
 * Every registered suite's held-out, test and probe items and canaries, indexed for pass 1. Public items are left to
 * the loop: its check refuses a version that copies one, and the outer loop's versions drop such examples. Held-out,
 * test and probe text, or a canary, in training data is a leak whatever the campaign.
 */
async function registrationIndex(db: Db, name: string): Promise<ContaminationIndex> {
  const { items, canaries } = await contaminationSources(db, `checkContamination:dataset add ${name}`, ['heldout', 'test', 'probe']);
  return new ContaminationIndex(items, canaries);
}

interface Checked {
  /** Examples read (blank lines skipped; duplicates counted). */
  lines: number;
  contentHash: string;
}

type Parsed = { line: number; example: ExampleLine; problems?: undefined } | { line: number; example?: undefined; problems: string[] };

/** Every non-blank line of the file, parsed and checked; problems are `FILE:LINE: field: problem`. */
async function* parsedLines(file: string, onBytes?: (lines: number, bytes: number) => void): AsyncGenerator<Parsed> {
  let n = 0;
  for await (const l of readLines(fs.createReadStream(file, { highWaterMark: 1 << 20 }), MAX_EXAMPLE_LINE_BYTES)) {
    if (onBytes && ++n % 2000 === 0) onBytes(n, l.bytesRead);
    const at = `${file}:${l.line}`;
    if (l.text === undefined) {
      yield { line: l.line, problems: [`${at}: (line): ${l.problem}`] };
      continue;
    }
    if (l.text.trim() === '') continue;
    let raw: unknown;
    try {
      raw = JSON.parse(l.text);
    } catch (e) {
      yield { line: l.line, problems: [`${at}: (line): not valid JSON: ${(e as Error).message}`] };
      continue;
    }
    const r = checkExampleLine(raw);
    yield r.example ? { line: l.line, example: r.example } : { line: l.line, problems: r.problems.map((p) => `${at}: ${p}`) };
  }
  onBytes?.(n, fs.statSync(file).size);
}

/**
 * Pass 1: every line checked, nothing written; the hash over the canonical lines names the version. A malformed line
 * is reported before a contaminated one: the contamination of a file that does not parse is not worth a word yet.
 */
async function checkFile(file: string, index: ContaminationIndex, onBytes?: (lines: number, bytes: number) => void): Promise<Checked> {
  const hash = crypto.createHash('sha256');
  const problems: string[] = [];
  let total = 0;
  let lines = 0;
  let contaminated: string | undefined;
  for await (const p of parsedLines(file, onBytes)) {
    if (p.problems) {
      total += p.problems.length;
      problems.push(...p.problems.slice(0, SHOWN_PROBLEMS - problems.length));
      continue;
    }
    lines++;
    hash.update(JSON.stringify(canonicalExample(p.example)) + '\n');
    if (contaminated === undefined && !index.empty) {
      const problem = lineContamination(index, p.example);
      if (problem) contaminated = `${file}:${p.line}: ${problem}`;
    }
  }
  if (lines === 0 && total === 0) throw new MalformedDatasetError(file, [`${file}: no examples (the file is empty or blank)`], 1);
  if (total > 0) throw new MalformedDatasetError(file, problems, total);
  if (contaminated) throw new ContaminatedLineError(contaminated);
  return { lines, contentHash: hash.digest('hex') };
}

/**
 * The file's lines alone, against no eval item (nothing to read from a database): `flywheel dataset add` says what is
 * wrong with a file even when no stack is up. Registration checks it again, with the contamination check.
 */
export async function checkDatasetFile(file: string): Promise<void> {
  await checkFile(file, new ContaminationIndex([], []));
}

/** The version when it exists, with its counts from the database. */
async function existing(q: Pick<PoolClient, 'query'>, versionId: string, lines: number): Promise<RegisteredDataset | undefined> {
  const { rows } = await q.query<{ category: string; n: number }>(
    `SELECT e.category, count(*)::int AS n FROM dataset_versions v JOIN examples e ON e.dataset_version_id = v.id
     WHERE v.id = $1 GROUP BY e.category ORDER BY e.category`,
    [versionId],
  );
  if (rows.length === 0) return undefined;
  const byCategory = Object.fromEntries(rows.map((r) => [r.category, r.n]));
  const examples = rows.reduce((a, r) => a + r.n, 0);
  return { versionId, created: false, examples, duplicates: lines - examples, byCategory };
}

/** Pass 2, inside the caller's transaction. */
async function load(
  client: PoolClient,
  name: string,
  file: string,
  versionId: string,
  checked: Checked,
  home: string,
  progress?: (phase: RegisterProgress['phase'], lines: number, bytes: number) => void,
): Promise<RegisteredDataset> {
  const onBytes = progress && ((n: number, bytes: number) => progress('load', n, bytes));
  await client.query('CREATE TEMP TABLE dataset_lines (ordinal int, content_hash text, content text, line text) ON COMMIT DROP');
  const hash = crypto.createHash('sha256');
  let lines = 0;
  async function* csvRows(): AsyncGenerator<string> {
    let batch = '';
    for await (const p of parsedLines(file, onBytes)) {
      if (!p.example) throw new FileChangedError(file);
      lines++;
      hash.update(JSON.stringify(canonicalExample(p.example)) + '\n');
      const content = exampleContent(p.example);
      const line = trainExampleLine({ ...p.example, source: USER_SOURCE });
      // `content` is sent only for chat examples; a prompt's and completion's is their concatenation, made below.
      batch += `${p.line},${contentHashOf(content)},${'messages' in p.example ? csv(content) : ''},${csv(line)}\n`;
      if (batch.length >= 1 << 16) {
        yield batch;
        batch = '';
      }
    }
    if (batch) yield batch;
  }
  await pipeline(
    Readable.from(csvRows()),
    client.query(copyFrom('COPY dataset_lines (ordinal, content_hash, content, line) FROM STDIN (FORMAT csv)')),
  );
  if (lines !== checked.lines || hash.digest('hex') !== checked.contentHash) throw new FileChangedError(file);
  progress?.('store', lines, fs.statSync(file).size);

  // The first line of each text is the example; the others are duplicates.
  const unique = await client.query(
    `CREATE TEMP TABLE dataset_examples ON COMMIT DROP AS
     SELECT ordinal, content_hash, coalesce(content, (j->>'prompt') || (j->>'completion')) AS content, j, line
     FROM (SELECT DISTINCT ON (content_hash) ordinal, content_hash, content, line::jsonb AS j, line
           FROM dataset_lines ORDER BY content_hash, ordinal) first_lines`,
  );
  await client.query('DROP TABLE dataset_lines');
  const examples = unique.rowCount ?? 0;
  await client.query(
    `INSERT INTO examples (dataset_version_id, content_hash, source, source_ref, category, content, prompt, completion, messages, weight)
     SELECT $1, content_hash, $2, $3 || ':' || ordinal, j->>'category', content, j->>'prompt', j->>'completion', j->'messages',
       (j->>'weight')::float8
     FROM dataset_examples ON CONFLICT DO NOTHING`,
    [versionId, USER_SOURCE, path.basename(file)],
  );
  const { rows } = await client.query<{ category: string; n: number }>(
    `SELECT j->>'category' AS category, count(*)::int AS n FROM dataset_examples GROUP BY 1 ORDER BY 1`,
  );
  const byCategory = Object.fromEntries(rows.map((r) => [r.category, r.n]));

  const dir = datasetDirOf(home, versionId);
  const countsBySource = { [USER_SOURCE]: examples };
  await writeVersionFiles(dir, readBack(client), () => ({
    versionId,
    parentIds: [],
    contentHash: checked.contentHash,
    countsBySource,
    byCategory,
  }));

  await client.query('INSERT INTO datasets (id, name, campaign_id) VALUES ($1, $1, NULL) ON CONFLICT DO NOTHING', [name]);
  await client.query(
    `INSERT INTO dataset_versions (id, dataset_id, parent_ids, path, content_hash, counts_by_source)
     VALUES ($1, $2, '[]'::jsonb, $3, $4, $5::jsonb)`,
    [versionId, name, dir, checked.contentHash, JSON.stringify(countsBySource)],
  );
  return { versionId, created: true, examples, duplicates: checked.lines - examples, byCategory };
}

/** The collapsed examples in file order, streamed out of PostgreSQL by COPY (text format, one row a line). */
async function* readBack(client: PoolClient): AsyncGenerator<VersionRecord> {
  const out = client.query(
    copyTo(`COPY (SELECT content_hash, j->'weight', content, line FROM dataset_examples ORDER BY ordinal) TO STDOUT`),
  );
  for await (const row of readLines(out, Infinity)) {
    const [contentHash, weight, text, line] = row.text!.split('\t');
    yield { contentHash, weight: Number(weight), text: unescapeCopyText(text), line: unescapeCopyText(line) };
  }
}

/** The file's content changed between the two passes: nothing is kept; registering again reads it anew. */
export class FileChangedError extends UsageError {
  constructor(file: string) {
    super(`${file} changed while it was being registered: nothing registered; run \`flywheel dataset add\` again`);
  }
}

function csv(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

const COPY_ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/** A field of COPY's text format: backslash escapes undone. */
function unescapeCopyText(s: string): string {
  return s.includes('\\') ? s.replace(/\\(.)/g, (_, c: string) => COPY_ESCAPES[c] ?? c) : s;
}
