// The one writer of a dataset version's folder, the files every trainer reads through run.json:
//   train.jsonl  one example a line (core/dataset/example-line.ts `TrainExample`: its fields, `source`, and its
//                effective weight), in the version's order;
//   train.txt    every example's prompt followed by its completion, repeated by its effective weight (resampled by
//                its content hash, core/dataset/loss-weights.ts `repetitions`), joined by "\n";
//   pairs.jsonl  preference pairs, one a line (core/dataset/example-line.ts `TrainPair`), only on a version that has any;
//   version.json what the version is (its id, parents, counts, weights), with train.txt's size and sha256.
// Streamed, so a version of a million examples is never one string; each file is written under a temporary name and
// renamed, so a reader sees a whole file or none.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import {
  promptAndCompletion,
  TRAIN_EXAMPLES_FILE,
  TRAIN_PAIRS_FILE,
  trainExampleLine,
  type TrainExample,
} from '../../core/dataset/example-line';
import { TRAIN_TEXT_FILE as TRAIN_FILE } from '../../core/contract-files';
import { repetitions, uniformOf } from '../../core/dataset/loss-weights';

export const VERSION_FILE = 'version.json';
/** Examples in train.txt are joined as the built-in corpus's files are. */
const SEPARATOR = '\n';

/** One example as the files hold it: its train.jsonl line, its train.txt text, its effective weight and hash. */
export interface VersionRecord {
  /** sha256 of the example's content: the draw that rounds its repetitions up or down. */
  contentHash: string;
  /** Effective weight: how many times `text` appears in train.txt, in expectation. */
  weight: number;
  /** Prompt followed by completion. */
  text: string;
  /** Its train.jsonl line, without the newline. */
  line: string;
}

export interface WrittenVersionFiles {
  examples: number;
  /** Bytes of train.txt, repetitions included. */
  trainBytes: number;
  trainSha256: string;
}

export function versionRecord(example: TrainExample, contentHash: string): VersionRecord {
  const { prompt, completion } = promptAndCompletion(example);
  return { contentHash, weight: example.weight, text: prompt + completion, line: trainExampleLine(example) };
}

/** How many times the record's text appears in train.txt. */
export function copiesOf(r: Pick<VersionRecord, 'contentHash' | 'weight'>): number {
  return repetitions(r.weight, uniformOf(r.contentHash));
}

/** The size train.txt would have, without writing it (a version that already exists reports it too). */
export function trainBytesOf(records: Iterable<Pick<VersionRecord, 'contentHash' | 'weight' | 'text'>>): number {
  let bytes = 0;
  let pieces = 0;
  for (const r of records) {
    const k = copiesOf(r);
    bytes += k * Buffer.byteLength(r.text);
    pieces += k;
  }
  return bytes + Math.max(0, pieces - 1) * Buffer.byteLength(SEPARATOR);
}

/**
 * Writes train.jsonl, train.txt and version.json into `dir` (created if missing) from `records`, in their order.
 * `describe` gives version.json's fields from what was written; `trainBytes` and `trainSha256` are added to them.
 * `pairLines` (each a `trainPairLine`, no newline), when there are any, become pairs.jsonl.
 */
export async function writeVersionFiles(
  dir: string,
  records: Iterable<VersionRecord> | AsyncIterable<VersionRecord>,
  describe: (written: WrittenVersionFiles) => Record<string, unknown>,
  pairLines: readonly string[] = [],
): Promise<WrittenVersionFiles> {
  fs.mkdirSync(dir, { recursive: true });
  if (pairLines.length) {
    const pairs = new AtomicFile(path.join(dir, TRAIN_PAIRS_FILE));
    try {
      for (const line of pairLines) await pairs.write(line + '\n');
      await pairs.commit();
    } catch (e) {
      pairs.abandon();
      throw e;
    }
  }
  const jsonl = new AtomicFile(path.join(dir, TRAIN_EXAMPLES_FILE));
  const txt = new AtomicFile(path.join(dir, TRAIN_FILE));
  const hash = crypto.createHash('sha256');
  let examples = 0;
  let trainBytes = 0;
  let pieces = 0;
  try {
    for await (const r of records) {
      examples++;
      await jsonl.write(r.line + '\n');
      for (let k = copiesOf(r); k > 0; k--) {
        const piece = pieces++ > 0 ? SEPARATOR + r.text : r.text;
        hash.update(piece);
        trainBytes += Buffer.byteLength(piece);
        await txt.write(piece);
      }
    }
    await jsonl.commit();
    await txt.commit();
  } catch (e) {
    jsonl.abandon();
    txt.abandon();
    throw e;
  }
  const written = { examples, trainBytes, trainSha256: hash.digest('hex') };
  const v = new AtomicFile(path.join(dir, VERSION_FILE));
  await v.write(JSON.stringify({ ...describe(written), trainBytes, trainSha256: written.trainSha256 }, null, 2) + '\n');
  await v.commit();
  return written;
}

/** A file written under a unique temporary name (two workers writing one version never share a file), then renamed. */
class AtomicFile {
  private readonly tmp: string;
  private readonly out: fs.WriteStream;
  /** Settles when the stream ends or fails (a failure at any time, even with no write waiting, lands here). */
  private readonly done: Promise<void>;
  private pending = '';

  constructor(private readonly file: string) {
    this.tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    this.out = fs.createWriteStream(this.tmp);
    this.done = finished(this.out);
    this.done.catch(() => undefined);
  }

  /** Buffers small writes into chunks of about 64 KiB, and waits when the disk is behind. */
  async write(s: string): Promise<void> {
    this.pending += s;
    if (this.pending.length < 1 << 16) return;
    await this.flush();
  }

  async commit(): Promise<void> {
    await this.flush();
    this.out.end();
    await this.done;
    fs.renameSync(this.tmp, this.file);
  }

  abandon(): void {
    this.out.destroy();
    fs.rmSync(this.tmp, { force: true });
  }

  private async flush(): Promise<void> {
    const s = this.pending;
    this.pending = '';
    if (s && !this.out.write(s)) await Promise.race([once(this.out, 'drain'), this.done]);
  }
}
