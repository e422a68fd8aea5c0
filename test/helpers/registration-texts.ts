// What the registration-time contamination tests share (test/datasets/registration-contamination.test.ts,
// test/redteam/registration.test.ts): eval items' text long enough to fingerprint (13-character n-grams) and unlike
// one another, and the count of what `dataset add` writes, which a refusal must leave as it was.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client';

export const PUBLIC_ITEM = {
  prompt: 'function clampToRange(value, lowest, highest) {\n  return Math.min(highest, Math.max(lowest, ',
  reference: 'value));\n}',
};
export const HELDOUT_ITEM = {
  prompt: 'export function slugify(title) {\n  return title.toLowerCase().replace(/[^a-z0-9]+/g, "-");\n}\n// slugify("A B") === ',
  reference: '"a-b"',
};
/** A perturbed twin of PUBLIC_ITEM: other names, under half its n-grams. */
export const TWIN_ITEM = { prompt: 'function clampBetween(v, lo, hi) {\n  return Math.min(hi, Math.max(lo, ', reference: 'v));\n}' };
export const RING_ITEM = {
  prompt: 'class RingBuffer<T> {\n  private items: T[] = [];\n  push(x: T) { this.items.push(x); ',
  reference: 'if (this.items.length > 8) this.items.shift(); }\n}',
};

/** Dataset, version and example rows, and the version folders under `home`. */
export async function datasetWrites(db: Db, home: string): Promise<{ rows: number; folders: string[] }> {
  const { rows } = await db.execute<{ n: number }>(
    sql`SELECT (SELECT count(*) FROM datasets) + (SELECT count(*) FROM dataset_versions) + (SELECT count(*) FROM examples) AS n`,
  );
  const dir = path.join(home, 'datasets');
  return { rows: Number(rows[0].n), folders: fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [] };
}
