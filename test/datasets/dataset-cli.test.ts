// `flywheel dataset add|list|show` as a user runs them (bin/flywheel.js in a child process) on a real PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { datasets, datasetVersions, examples } from '../../db/schema';
import { cliEnv, runCli } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';

const home = scratchDir('dataset-cli');
let h: DbHandle;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  const { url, handle } = await freshDatabase('dataset_cli');
  h = handle;
  env = cliEnv({ dbUrl: url, home }, 'dataset-cli');
});
afterAll(async () => {
  await h?.close();
});

const rowsIn = async () =>
  Promise.all([datasets, datasetVersions, examples].map(async (t) => (await h.db.select({ n: sql<number>`count(*)::int` }).from(t))[0].n));

test('dataset add prints NAME@<version> alone on stdout; list and show report it; --json', async () => {
  const file = path.join(home, 'math.jsonl');
  const lines = [
    { prompt: '1+1=', completion: '2', category: 'add' },
    { prompt: '2+3=', completion: '5', category: 'add' },
    { prompt: '9-4=', completion: '5', category: 'sub' },
    {
      messages: [
        { role: 'user', content: 'twice 4?' },
        { role: 'assistant', content: '8' },
      ],
      category: 'mul',
    },
  ];
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const add = await runCli(env, ['dataset', 'add', 'math', file]);
  // No terminal: no progress bar, no summary; the version id is the one line of output.
  expect(add).toMatchObject({ status: 0, stderr: '' });
  expect(add.stdout).toMatch(/^math@[0-9a-f]{12}\n$/);
  const versionId = add.stdout.trim();

  const again = await runCli(env, ['dataset', 'add', 'math', file]);
  expect(again).toMatchObject({ status: 0, stdout: `${versionId}\n`, stderr: '' });

  const show = await runCli(env, ['dataset', 'show', 'math']);
  expect(show.status).toBe(0);
  expect(show.stdout).toContain(`${versionId}  4 examples`);
  expect(show.stdout).toMatch(/^ {2}add {2}2$/m);
  expect(show.stdout).toMatch(/^ {2}sub {2}1$/m);
  expect(show.stdout).toMatch(/^ {2}mul {2}1$/m);
  expect(show.stdout).toContain('parents: none');
  expect(show.stdout).toContain('{"prompt":"1+1=","completion":"2","category":"add","weight":1,"source":"user"}');

  const json = await runCli(env, ['dataset', 'show', versionId, '--json']);
  expect(JSON.parse(json.stdout)).toMatchObject({
    versionId,
    examples: 4,
    byCategory: { add: 2, sub: 1, mul: 1 },
    parents: [],
    children: [],
  });

  const list = await runCli(env, ['dataset', 'list', '--json']);
  expect(JSON.parse(list.stdout)).toMatchObject({ datasets: [{ name: 'math', versions: 1, newest_version: versionId, examples: 4 }] });
  const table = await runCli(env, ['dataset', 'list']);
  expect(table.stdout).toMatch(new RegExp(`^math +1 +${versionId.replace('.', '\\.')} +4 `, 'm'));

  const missing = await runCli(env, ['dataset', 'show', 'nope']);
  expect(missing.status).toBe(2);
  expect(missing.stderr).toContain('no dataset "nope"');
});

test('dataset add of a bad file: one line per problem with its location, exit 2, zero rows', async () => {
  const before = await rowsIn();
  const file = path.join(home, 'bad.jsonl');
  fs.writeFileSync(
    file,
    [JSON.stringify({ prompt: 'a', completion: 'b' }), 'not json', JSON.stringify({ prompt: 'a', completion: '', weight: -1 })].join('\n'),
  );
  const r = await runCli(env, ['dataset', 'add', 'bad', file]);
  expect(r.status).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines[0]).toBe(`flywheel: ${file}: 3 problems, nothing registered`);
  expect(lines.slice(1)).toEqual([
    expect.stringMatching(new RegExp(`^${file}:2: \\(line\\): not valid JSON: `)),
    `${file}:3: completion: must not be empty (the loss is on the completion)`,
    `${file}:3: weight: must be >= 0`,
  ]);
  expect(await rowsIn()).toEqual(before);
  expect(
    fs.existsSync(path.join(home, 'datasets')) ? fs.readdirSync(path.join(home, 'datasets')).filter((d) => d.startsWith('bad')) : [],
  ).toEqual([]);
});

test('with no stack up, dataset add and suite add still say what is wrong with the file (FILE:LINE, exit 2), then that no stack is up', async () => {
  const noStack = { ...env, DATABASE_URL: '', FLYWHEEL_HOME: path.join(home, 'no-stack-home') };
  const bad = path.join(home, 'no-stack-bad.jsonl');
  fs.writeFileSync(bad, '{"prompt": "1+1=", "completion": "2"}\n{"prompt": "2+2=", "completion": 4}\n');
  const r = await runCli(noStack, ['dataset', 'add', 'nostack', bad]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain(`${bad}:2: completion: Invalid input: expected string, received number`);
  const suite = path.join(home, 'no-stack-suite.yaml');
  fs.writeFileSync(suite, 'name: nostack\nitems: []\n');
  expect(await runCli(noStack, ['suite', 'add', suite])).toMatchObject({
    status: 2,
    stderr: `flywheel: ${suite}: malformed eval suite: items: a suite needs at least one item\n`,
  });
  const good = path.join(home, 'no-stack-good.jsonl');
  fs.writeFileSync(good, '{"prompt": "1+1=", "completion": "2"}\n');
  const later = await runCli(noStack, ['dataset', 'add', 'nostack', good]);
  expect(later.status).toBe(1);
  expect(later.stderr).toMatch(/^flywheel: no database: set DATABASE_URL or start a stack/);
});
