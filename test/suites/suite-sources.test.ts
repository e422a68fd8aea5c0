// Every registered suite's source file, for the trainer-path check (a trainer's read-only paths must not show one):
// `suite add` records the file's real path (links resolved), the same content from another file adds that path, and
// registeredSuiteSources lists each path once.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { evalSuites } from '../../db/schema';
import { registerEvalSuite } from '../../services/suites/register-suite';
import { registeredSuiteSources } from '../../services/suites/suite-sources';
import { cliEnv, runCli } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';

let h: DbHandle;
let env: NodeJS.ProcessEnv;
const home = scratchDir('suite-sources');
const files = fs.realpathSync(scratchDir('suite-sources-files'));

const suite = (name: string, reference = '42') => ({
  name,
  items: [{ id: 'p1', split: 'public', grader: { kind: 'exact_match' }, prompt: '17 + 25 =', reference }],
});
const write = (name: string, content: object) => {
  const file = path.join(files, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(content));
  return file;
};
const sourcesOf = async (id: string) =>
  (await h.db.select({ settings: evalSuites.settings }).from(evalSuites).where(eq(evalSuites.id, id)))[0].settings.sourcePaths;

beforeAll(async () => {
  const db = await freshDatabase('suite_sources');
  h = db.handle;
  env = cliEnv({ dbUrl: db.url, home }, 'suite-sources-');
});
afterAll(async () => h?.close());

test('suite add records the real path; the same content from another file adds it; each path is listed once', async () => {
  expect(await registeredSuiteSources(h.db)).toEqual([]);
  const real = write('evals/arith.json', suite('arith'));
  // Registered through a link in another folder: the recorded path is the file's own.
  const link = path.join(files, 'link-to-arith.json');
  fs.symlinkSync(real, link);
  expect(await runCli(env, ['suite', 'add', path.relative(process.cwd(), link)])).toMatchObject({ status: 0, stdout: 'arith@1\n' });
  expect(await sourcesOf('arith@1')).toEqual([real]);

  const copy = write('copies/arith.json', suite('arith'));
  expect(await runCli(env, ['suite', 'add', copy])).toMatchObject({ status: 0, stdout: 'arith@1\n' });
  expect(await runCli(env, ['suite', 'add', real])).toMatchObject({ status: 0, stdout: 'arith@1\n' });
  expect(await sourcesOf('arith@1')).toEqual([real, copy]);

  // A new version from the first file, and another suite: the first file is still listed once.
  expect(await runCli(env, ['suite', 'add', write('evals/arith.json', suite('arith', '43'))])).toMatchObject({ stdout: 'arith@2\n' });
  const other = write('evals/other.json', suite('other'));
  expect(await runCli(env, ['suite', 'add', other])).toMatchObject({ stdout: 'other@1\n' });
  expect(await registeredSuiteSources(h.db)).toEqual([copy, real, other].sort());
});

test('a suite registered in code, without a file, has no source', async () => {
  const r = await registerEvalSuite(h.db, suite('in-code'));
  expect(await sourcesOf(r.suiteId)).toBeUndefined();
  expect(await registeredSuiteSources(h.db)).not.toContainEqual(expect.stringContaining('in-code'));
});
