// `flywheel show EXPERIMENT` and `flywheel compare A B` over seeded public results: the items with output, reference,
// grade and diff, the filters, a campaign's production model as a side, exit 2 on a name that is nothing, and never a
// held-out or test item's id or text, in the text view or in --json.
import type { DbHandle } from '../../db/client';
import { runCli } from '../helpers/cli';
import { freshDatabase } from '../helpers/env';
import { SEALED, seedPredictions } from '../helpers/predictions-fixture';

const LOOP = 'sc/inner/1';
let h: DbHandle;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  let url: string;
  ({ handle: h, url } = await freshDatabase('show_command'));
  const q = (text: string, params: unknown[] = []) => h.pool.query(text, params);
  await q(`INSERT INTO campaigns (id, spec, spec_hash, production_checkpoint_id) VALUES ('sc', '{}', 'h', $1)`, [
    `${LOOP}/e37/r1/step-1000`,
  ]);
  for (const e of [3, 37]) {
    await q(
      `INSERT INTO experiments (id, campaign_id, inner_loop_id, index, dataset_version_id, params, proposer, status) VALUES ($1, 'sc', $2, $3, 'v1', '{}', 'tpe', 'succeeded')`,
      [`${LOOP}/e${e}`, LOOP, e],
    );
    await q(
      `INSERT INTO checkpoints (id, run_id, experiment_id, step, path, sha256, format) VALUES ($1, $2, $3, 1000, '/x', 's', 'charlm-v1')`,
      [`${LOOP}/e${e}/r1/step-1000`, `${LOOP}/e${e}/r1`, `${LOOP}/e${e}`],
    );
  }
  await seedPredictions(q, LOOP);
  env = { ...process.env, DATABASE_URL: url };
}, 60_000);
afterAll(async () => h?.close());

const noSealed = (text: string) => {
  for (const s of SEALED) expect(text).not.toContain(s);
};

test('show: every public item with its grade, and a diff for a failed one; filters; --json; nothing sealed', async () => {
  const all = await runCli(env, ['show', `${LOOP}/e3`]);
  expect(all.stderr).toBe('');
  expect(all.status).toBe(0);
  expect(all.stdout).toContain('4 items match; categories: math, text');
  expect(all.stdout).toMatch(
    /FAIL \(0\) {2}greet \[text\]\n.*prompt +Say hello to Ada: \n.*reference +Hello, Ada!\n.*output +Hello, Bob!\n.*diff +Hello, \[-Ada-\]\{\+Bob\+\}!/,
  );
  noSealed(all.stdout);

  const failed = await runCli(env, ['show', `${LOOP}/e3`, '--verdict', 'fail', '--category', 'math', '--json']);
  const p = JSON.parse(failed.stdout) as { items: { id: string; output: string }[] };
  expect(p.items.map((i) => [i.id, i.output])).toEqual([['rv@1/mul', '6']]);
  noSealed(failed.stdout);

  const bad = await runCli(env, ['show', 'sc/inner/1/e99']);
  expect(bad.status).toBe(2);
  expect(bad.stderr.trim()).toBe('flywheel: no experiment "sc/inner/1/e99"');
  expect((await runCli(env, ['show', `${LOOP}/e3`, '--verdict', 'maybe'])).status).toBe(2);
}, 60_000);

test('compare: an experiment against the campaign’s production model, item by item, with what changed', async () => {
  const c = await runCli(env, ['compare', `${LOOP}/e3`, 'sc']);
  expect(c.status).toBe(0);
  expect(c.stdout).toContain('4 shared public items match: 1 better, 1 worse, 2 same');
  expect(c.stdout).toMatch(/WORSE {2}fn \[text\] {2}A PASS \(1\) → B FAIL \(0\)/);
  expect(c.stdout).toMatch(/A → B +return a \[-\+-\]\{\+-\+\} b/);
  noSealed(c.stdout);
  const worse = await runCli(env, ['compare', `${LOOP}/e3`, `${LOOP}/e37`, '--change', 'better', '--json']);
  expect((JSON.parse(worse.stdout) as { items: { id: string }[] }).items.map((i) => i.id)).toEqual(['rv@1/mul']);
  noSealed(worse.stdout);
  const bad = await runCli(env, ['compare', `${LOOP}/e3`, 'nothing']);
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain('no experiment, nor campaign with a production model, "nothing"');
}, 60_000);
