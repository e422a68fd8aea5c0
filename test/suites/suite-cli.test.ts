// `flywheel suite add|list|show` through the real command on a real database: a JSON or YAML suite file registered as
// NAME@N (the same content again: the same version), a malformed suite refused with its file and failing items and
// nothing stored, and `show` counting held-out items without ever printing their text.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import YAML from 'yaml';
import type { DbHandle } from '../../db/client';
import { cliEnv, runCli } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';

let h: DbHandle;
let env: NodeJS.ProcessEnv;
const home = scratchDir('suite-cli');
const HELDOUT_SECRET = 'zebra-quartz-held-out-7731';

const suite = (name: string, extra: object[] = []) => ({
  name,
  canaries: ['FWCANARY-suite-cli-0123456789'],
  items: [
    { id: 'p1', split: 'public', grader: { kind: 'exact_match' }, category: 'carry', prompt: '17 + 25 =', reference: '42' },
    {
      id: 'p2',
      split: 'public',
      grader: { kind: 'numeric_tolerance', absolute: 0.5 },
      category: 'no-carry',
      prompt: '11 + 22 =',
      reference: '33',
    },
    {
      id: 'h1',
      split: 'heldout',
      grader: { kind: 'exact_match' },
      category: 'carry',
      prompt: `${HELDOUT_SECRET} 18 + 24 =`,
      reference: `42 ${HELDOUT_SECRET}`,
    },
    {
      id: 't1',
      split: 'probe',
      grader: { kind: 'exact_match' },
      category: 'carry',
      prompt: '27 + 15 =',
      reference: '42',
      probe: { kind: 'perturbed', of: 'p1' },
    },
    ...extra,
  ],
});

function write(name: string, text: string): string {
  const file = path.join(home, name);
  fs.writeFileSync(file, text);
  return file;
}
const cli = (args: string[]) => runCli(env, args);
const count = async (table: string) => (await h.db.execute<{ n: number }>(sql.raw(`SELECT count(*)::int AS n FROM ${table}`))).rows[0].n;

beforeAll(async () => {
  const db = await freshDatabase('suite_cli');
  h = db.handle;
  env = cliEnv({ dbUrl: db.url, home }, 'suite-cli-');
});
afterAll(async () => h?.close());

test('a JSON suite and a YAML suite are registered as NAME@N; the same content again is the same version', async () => {
  const json = write('arith.json', JSON.stringify(suite('arith')));
  const first = await cli(['suite', 'add', json]);
  expect(first).toMatchObject({ status: 0, stdout: 'arith@1\n' });
  expect(first.stderr).toMatch(/registered: public 2, heldout 1, probe 1/);
  const again = await cli(['suite', 'add', write('arith-copy.yaml', YAML.stringify(suite('arith')))]);
  expect(again).toMatchObject({ status: 0, stdout: 'arith@1\n' });
  const edited = await cli([
    'suite',
    'add',
    write(
      'arith-2.yaml',
      YAML.stringify(
        suite('arith', [{ id: 'p3', split: 'public', grader: { kind: 'exact_match' }, prompt: '1 + 1 =', reference: '2', maxBytes: 8 }]),
      ),
    ),
  ]);
  expect(edited).toMatchObject({ status: 0, stdout: 'arith@2\n' });
  const yaml = await cli(['suite', 'add', write('other.yaml', YAML.stringify(suite('other')))]);
  expect(yaml).toMatchObject({ status: 0, stdout: 'other@1\n' });
  const [row] = (await h.db.execute<{ max_bytes: number }>(sql`SELECT max_bytes FROM eval_items WHERE id = 'arith@2/p3'`)).rows;
  expect(row.max_bytes).toBe(8);

  const list = await cli(['suite', 'list']);
  expect(list.status).toBe(0);
  expect(list.stdout).toMatch(/^arith@2 {2}2 versions {2}public 3, heldout 1, probe 1$/m);
  expect(list.stdout).toMatch(/^other@1 {2}1 version {2}public 2, heldout 1, probe 1$/m);
  const listJson = JSON.parse((await cli(['suite', 'list', '--json'])).stdout) as { newest: string }[];
  expect(listJson.map((r) => r.newest)).toEqual(['arith@2', 'other@1']);
});

test('a malformed suite is refused with its file and failing items, exit 2, and nothing is stored', async () => {
  const [suites, items] = [await count('eval_suites'), await count('eval_items')];
  const bad = suite('broken', [
    { id: 'b1', split: 'public', grader: { kind: 'no_such_grader' }, prompt: 'x', reference: 'y' },
    { id: 'b2', split: 'probe', grader: { kind: 'exact_match' }, prompt: 'x', reference: 'y', probe: { kind: 'perturbed', of: 'missing' } },
  ]);
  const file = write('broken.yaml', YAML.stringify(bad));
  const r = await cli(['suite', 'add', file]);
  expect(r.status).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`${file}: malformed eval suite "broken", 2 failing item(s)`);
  expect(lines[0]).toContain('items[4] "b1": grader');
  expect(lines[0]).toContain('item "b2"');
  expect([await count('eval_suites'), await count('eval_items')]).toEqual([suites, items]);

  const unparsable = await cli(['suite', 'add', write('junk.yaml', 'name: [unclosed')]);
  expect(unparsable.status).toBe(2);
  expect(unparsable.stderr).toMatch(/junk\.yaml:1:\d+: cannot parse/);
  expect((await cli(['suite', 'add', path.join(home, 'absent.json')])).stderr).toMatch(/absent\.json: cannot read: no such file/);
});

test('show counts per split, category and grader, samples public and probe items, and never prints held-out text', async () => {
  const r = await cli(['suite', 'show', 'arith@1', '--sample', '10']);
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^arith@1$/m);
  expect(r.stdout).toMatch(/items: public 2, heldout 1, probe 1 \(held-out items are counted, never shown\)/);
  expect(r.stdout).toMatch(/public: categories carry 1, no-carry 1; graders exact_match 1, numeric_tolerance 1/);
  expect(r.stdout).toMatch(/heldout: categories carry 1; graders exact_match 1/);
  expect(r.stdout).toContain('17 + 25 =');
  expect(r.stdout).toContain('27 + 15 =');
  expect(r.stdout).not.toContain(HELDOUT_SECRET);
  expect(r.stdout).not.toContain('arith@1/h1');
  const json = await cli(['suite', 'show', 'arith', '--json', '--sample', '50']);
  expect(json.status).toBe(0);
  expect(JSON.parse(json.stdout)).toMatchObject({ id: 'arith@2', bySplit: { public: 3, heldout: 1, probe: 1 } });
  expect(json.stdout).not.toContain(HELDOUT_SECRET);

  const unknown = await cli(['suite', 'show', 'nope']);
  expect(unknown.status).toBe(2);
  expect(unknown.stderr.trim()).toBe('flywheel: suite "nope" is not registered (flywheel suite add FILE.json)');
});
