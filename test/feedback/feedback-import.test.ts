// `flywheel feedback import` as a user runs it: a real CLI process against a fresh database.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { campaigns, feedbackEvents } from '../../db/schema';
import type { CampaignSpec } from '../../core/spec';
import { freshDatabase, scratchDir } from '../helpers/env';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');
const dir = scratchDir('feedback-import');
let db: DbHandle;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  let url: string;
  ({ url, handle: db } = await freshDatabase('feedback_import'));
  await db.db.insert(campaigns).values({ id: 'c1', spec: {} as CampaignSpec, specHash: 'x' });
  env = { ...process.env, DATABASE_URL: url, FLYWHEEL_HOME: dir };
});
afterAll(async () => {
  await db?.close();
});

/** Async, so nothing in this process blocks while the CLI runs. */
function cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

function writeJsonl(name: string, lines: unknown[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n');
  return file;
}

const event = (i: number, over: Record<string, unknown> = {}) => ({
  id: `imp-${i}`,
  campaignId: 'c1',
  kind: 'accept',
  modelVersion: 'ckpt-1',
  prompt: `p${i}`,
  output: `o${i}`,
  ...over,
});

async function rowCount(): Promise<number> {
  const [{ n }] = await db.db.select({ n: sql<number>`count(*)::int` }).from(feedbackEvents);
  return n;
}

test('a file with bad lines exits 2, names each line and path, and writes nothing', async () => {
  const file = writeJsonl('bad.jsonl', [
    event(1),
    event(2, { kind: 'rating', rating: 9 }),
    '',
    event(4),
    '{not json',
    event(6, { kind: 'edit' }),
    event(7, { category: 'has space' }),
  ]);
  const r = await cli(['feedback', 'import', file]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain(`${file}:2: rating: must be an integer from 1 to 5`);
  expect(r.stderr).toContain(`${file}:5: (root): malformed JSON`);
  expect(r.stderr).toContain(`${file}:6: correction: required when kind is "edit"`);
  expect(r.stderr).toContain(`${file}:7: category: letters, digits and ._:/- only`);
  expect(r.stderr).not.toContain(`${file}:1:`);
  expect(await rowCount()).toBe(0);
});

test('a good file is imported; the same file again is all duplicates', async () => {
  const file = writeJsonl('good.jsonl', [
    event(1),
    event(2, { kind: 'rating', rating: 5, comment: 'great' }),
    '',
    event(3, { kind: 'edit', correction: 'fixed', category: 'py.fix' }),
  ]);
  const first = await cli(['feedback', 'import', file]);
  expect(first).toMatchObject({ status: 0, stdout: 'imported 3, duplicates 0\n' });
  expect(await rowCount()).toBe(3);
  // The category a line names is stored (the outer loop's examples of it carry it); none named is null.
  const stored = await db.db
    .select({ id: feedbackEvents.id, category: feedbackEvents.category })
    .from(feedbackEvents)
    .orderBy(feedbackEvents.id);
  expect(stored).toEqual([
    { id: 'imp-1', category: null },
    { id: 'imp-2', category: null },
    { id: 'imp-3', category: 'py.fix' },
  ]);
  const again = await cli(['feedback', 'import', file]);
  expect(again).toMatchObject({ status: 0, stdout: 'imported 0, duplicates 3\n' });
  expect(await rowCount()).toBe(3);
});

test('a line whose id is stored with other content is a conflict: exit 2, its line named, nothing written', async () => {
  const before = await rowCount();
  const file = writeJsonl('conflict.jsonl', [
    event(100),
    event(1, { output: 'changed' }),
    event(2, { kind: 'rating', rating: 5, comment: 'great', category: 'other' }),
  ]);
  const r = await cli(['feedback', 'import', file]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain(`${file}:2: id: "imp-1" already stored with different content`);
  // Another category is other content.
  expect(r.stderr).toContain(`${file}:3: id: "imp-2" already stored with different content`);
  expect(await rowCount()).toBe(before);
});

test('a line that is not UTF-8 is refused, not stored with U+FFFD: exit 2, its line named', async () => {
  const before = await rowCount();
  const file = path.join(dir, 'latin1.jsonl');
  fs.writeFileSync(
    file,
    Buffer.concat([
      Buffer.from(JSON.stringify(event(200)) + '\n'),
      Buffer.from(JSON.stringify(event(201, { output: 'caf#' })).replace('#', '\xe9'), 'latin1'),
      Buffer.from('\n'),
    ]),
  );
  const r = await cli(['feedback', 'import', file]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain(`${file}:2: (root): not valid UTF-8`);
  expect(await rowCount()).toBe(before);
});

test('feedback for a campaign that does not exist is refused: exit 2, nothing written', async () => {
  const before = await rowCount();
  const file = writeJsonl('orphan.jsonl', [event(300), event(301, { campaignId: 'no-such-campaign' })]);
  const r = await cli(['feedback', 'import', file]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain(`${file}: no campaign "no-such-campaign": register it first`);
  expect(await rowCount()).toBe(before);
});

test('one id twice in the file with different content names both lines and stores nothing', async () => {
  const before = await rowCount();
  const file = writeJsonl('twice.jsonl', [event(400), event(400, { output: 'other' })]);
  const r = await cli(['feedback', 'import', file]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain(`${file}:1,2: id: "imp-400" appears again in the file with different content`);
  expect(r.stderr).not.toContain('already stored');
  expect(await rowCount()).toBe(before);
});

test('a missing file is a usage error', async () => {
  const r = await cli(['feedback', 'import', path.join(dir, 'nope.jsonl')]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('cannot read');
});

test("corrections without the trailing newline the campaign's data ends with are stored as sent, with one warning naming them", async () => {
  await db.db.insert(campaigns).values({ id: 'c2', spec: {} as CampaignSpec, specHash: 'y' });
  await db.pool.query(
    `INSERT INTO inner_loops (id, campaign_id, dataset_version_id, status) VALUES ('c2/inner/1', 'c2', 'c2/d@v', 'completed')`,
  );
  await db.pool.query(
    `INSERT INTO examples (dataset_version_id, content_hash, source, source_ref, content, prompt, completion, category) VALUES
     ('c2/d@v', 'h1', 'base', 'a', 'p1 x\n', 'p1', ' x\n', 'general'), ('c2/d@v', 'h2', 'base', 'b', 'p2 y\n', 'p2', ' y\n', 'general')`,
  );
  const c2 = (i: number, correction: string) => event(i, { campaignId: 'c2', kind: 'edit', correction });
  const file = writeJsonl('terminator.jsonl', [c2(500, 'fixed'), c2(501, 'fixed\n'), c2(502, 'also fixed')]);
  const r = await cli(['feedback', 'import', file]);
  expect(r).toMatchObject({ status: 0, stdout: 'imported 3, duplicates 0\n' });
  expect(r.stderr).toBe(
    `${file}: warning: 2 corrections for c2 (lines 1, 3) lack the "\\n" its dataset's completions end with; stored as sent, the outer loop adds it when it trains on them\n`,
  );
  // Corrections that follow it, or a campaign that has trained on nothing yet (c1), draw no warning.
  const quiet = await cli([
    'feedback',
    'import',
    writeJsonl('quiet.jsonl', [c2(503, 'ok\n'), event(504, { kind: 'edit', correction: 'x' })]),
  ]);
  expect(quiet).toMatchObject({ status: 0, stderr: '' });
});
