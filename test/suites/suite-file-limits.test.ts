// `flywheel suite add` on files past its caps (core/eval-suite/suite-limits.ts), through the real command: a field
// over 1 MiB, a file over 64 MiB, YAML over 1 MiB, too many items or JSON values, bytes that are not UTF-8. Each is one
// line that says what and where, exit 2, and nothing stored.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import YAML from 'yaml';
import type { DbHandle } from '../../db/client';
import { cliEnv, runCli, type CliResult } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';

const MiB = 1 << 20;
let h: DbHandle;
let env: NodeJS.ProcessEnv;
const home = scratchDir('suite-limits');

const item = (id: string, over: object = {}) => ({
  id,
  split: 'public',
  grader: { kind: 'exact_match' },
  prompt: `What is ${id}?`,
  reference: id,
  ...over,
});
const suite = (name: string, items: object[]) => ({ name, items });

function write(name: string, text: string | Buffer): string {
  const file = path.join(home, name);
  fs.writeFileSync(file, text);
  return file;
}
const cli = (args: string[]) => runCli(env, args);
const stored = async () =>
  (await h.db.execute<{ n: number }>(sql`SELECT (SELECT count(*) FROM eval_suites) + (SELECT count(*) FROM eval_items) AS n`)).rows[0].n;

/** Exit 2, nothing on stdout, exactly one line on stderr, and no row stored. */
async function expectRefused(r: CliResult, before: number, line: string | RegExp): Promise<void> {
  expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 2, stdout: '' });
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  if (typeof line === 'string') expect(lines[0]).toBe(line);
  else expect(lines[0]).toMatch(line);
  expect(await stored()).toBe(before);
}

beforeAll(async () => {
  const db = await freshDatabase('suite_limits');
  h = db.handle;
  env = cliEnv({ dbUrl: db.url, home }, 'suite-limits-');
});
afterAll(async () => h?.close());

test('a prompt, a reference or a test program over 1 MiB is refused, each named by its item and field', async () => {
  const before = await stored();
  const big = 'x'.repeat(MiB + 1);
  const file = write(
    'big-fields.json',
    JSON.stringify(
      suite('big', [
        item('ok'),
        item('p1', { prompt: big }),
        // Two bytes a character: more than 1 MiB in UTF-8 though fewer characters.
        item('r1', { reference: 'é'.repeat(MiB / 2 + 1) }),
        item('t1', { grader: { kind: 'test_program', tests: big } }),
      ]),
    ),
  );
  await expectRefused(
    await cli(['suite', 'add', file]),
    before,
    `flywheel: ${file}: malformed eval suite "big", 3 failing item(s): ` +
      `items[1] "p1": prompt: ${MiB + 1} bytes, more than a field may be (1 MiB); ` +
      `items[2] "r1": reference: ${MiB + 2} bytes, more than a field may be (1 MiB); ` +
      `items[3] "t1": grader.tests: ${MiB + 1} bytes, more than a field may be (1 MiB)`,
  );
  // Exactly 1 MiB is allowed.
  const fits = write('fits.json', JSON.stringify(suite('fits', [item('p1', { prompt: 'y'.repeat(MiB) })])));
  expect(await cli(['suite', 'add', fits])).toMatchObject({ status: 0, stdout: 'fits@1\n' });
});

test('a file over 64 MiB is refused by its size before it is read', async () => {
  const before = await stored();
  const file = write('huge.json', '');
  // A sparse file: its size says 64 MiB + 1 without writing them.
  fs.truncateSync(file, 64 * MiB + 1);
  await expectRefused(
    await cli(['suite', 'add', file]),
    before,
    `flywheel: ${file}: ${64 * MiB + 1} bytes, more than a suite file may be (64 MiB)`,
  );
});

test('YAML over 1 MiB is refused with the way out; the same suite as JSON registers', async () => {
  const before = await stored();
  const items = Array.from({ length: 6000 }, (_, i) => item(`i${i}`, { prompt: `Item ${i}: ${'a sentence of filler text. '.repeat(6)}` }));
  const yaml = YAML.stringify(suite('large', items));
  expect(yaml.length).toBeGreaterThan(MiB);
  const file = write('large.yaml', yaml);
  await expectRefused(
    await cli(['suite', 'add', file]),
    before,
    `flywheel: ${file}: cannot parse: more than a YAML suite file may be (1 MiB); a larger suite is written as JSON (up to 64 MiB)`,
  );
  const json = await cli(['suite', 'add', write('large.json', JSON.stringify(suite('large', items)))]);
  expect(json).toMatchObject({ status: 0, stdout: 'large@1\n' });
  expect(json.stderr).toMatch(/registered: public 6000/);
});

test('more than 100,000 items, or more than 4,000,000 JSON values, are refused', async () => {
  const before = await stored();
  const many = write(
    'many.json',
    JSON.stringify(
      suite(
        'many',
        Array.from({ length: 100_001 }, (_, i) => item(`i${i}`)),
      ),
    ),
  );
  await expectRefused(await cli(['suite', 'add', many]), before, `flywheel: ${many}: malformed eval suite: items: at most 100000 items`);
  // 64 MiB of tiny values once cost JSON.parse 2.2 GB: they are counted first.
  const values = write('values.json', `{"name":"values","items":[${'0,'.repeat(4_000_000)}0]}`);
  await expectRefused(
    await cli(['suite', 'add', values]),
    before,
    `flywheel: ${values}: more than 4000000 JSON values, more than a suite file may hold`,
  );
});

test('bytes that are not UTF-8 are refused with the line and byte offset, not stored as U+FFFD', async () => {
  const before = await stored();
  const text = JSON.stringify(suite('latin', [item('a'), item('b')]), null, 2);
  const at = text.indexOf('What is b');
  // "What is b" becomes "What is <0xE9>b": a Latin-1 é.
  const bytes = Buffer.concat([Buffer.from(text.slice(0, at + 8)), Buffer.from([0xe9]), Buffer.from(text.slice(at + 8))]);
  const line = text.slice(0, at).split('\n').length;
  const file = write('latin1.json', bytes);
  await expectRefused(
    await cli(['suite', 'add', file]),
    before,
    `flywheel: ${file}:${line}: not valid UTF-8 at byte offset ${at + 8} (a suite file is UTF-8 text)`,
  );
});
