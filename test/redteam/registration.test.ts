// Red team, at registration: someone who wants their model promoted registers a dataset that carries a suite's
// held-out or probe text, or a canary, so that training memorises what the gate and the hacking guard measure; or
// registers a suite whose one prompt costs gigabytes to read. Through the real `flywheel` command, each is refused in
// one line that says what and where, exit 2, with nothing written: no row, no folder under FLYWHEEL_HOME. On the code
// before, the datasets registered with exit 0 (the loop refused them later, exit 1) and the suite took 2.4 GB.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { cliEnv, runCli, type CliResult } from '../helpers/cli';
import { freshDatabase, scratchDir } from '../helpers/env';
import { datasetWrites, HELDOUT_ITEM, PUBLIC_ITEM, TWIN_ITEM } from '../helpers/registration-texts';

const home = scratchDir('redteam-registration');
let h: DbHandle;
let env: NodeJS.ProcessEnv;

const CANARY = 'FWCANARY-redteam-0123456789abcdef';
const HELDOUT_CANARY = '3f9a1c2b7d4e5a6b7c8d9e0f1a2b3c4d5e6f7a8b';
const SUITE = {
  name: 'redteam',
  canaries: [CANARY],
  heldoutCanaries: [HELDOUT_CANARY],
  items: [
    { id: 'p1', split: 'public', grader: { kind: 'exact_match' }, ...PUBLIC_ITEM },
    { id: 'h1', split: 'heldout', grader: { kind: 'exact_match' }, ...HELDOUT_ITEM },
    {
      id: 'h2',
      split: 'heldout',
      grader: { kind: 'exact_match' },
      category: 'canary',
      prompt: `// generated from commit ${HELDOUT_CANARY.slice(0, 12)}`,
      reference: HELDOUT_CANARY.slice(12),
    },
    { id: 't1', split: 'probe', grader: { kind: 'exact_match' }, probe: { kind: 'perturbed', of: 'p1' }, ...TWIN_ITEM },
  ],
};

const honest = (i: number) => JSON.stringify({ prompt: `Q: ${i} + ${i} = `, completion: String(2 * i) });
function dataset(name: string, lines: object[]): string {
  const file = path.join(home, name);
  fs.writeFileSync(file, [honest(1), ...lines.map((l) => JSON.stringify(l)), honest(2)].join('\n') + '\n');
  return file;
}

const written = () => datasetWrites(h.db, home);

/** Exit 2, nothing on stdout, exactly `line` on stderr, and nothing written. */
async function expectRefused(r: CliResult, before: Awaited<ReturnType<typeof written>>, line: string): Promise<void> {
  expect(r).toMatchObject({ status: 2, stdout: '' });
  expect(r.stderr.trimEnd().split('\n')).toEqual([line]);
  expect(await written()).toEqual(before);
}

beforeAll(async () => {
  const db = await freshDatabase('redteam_registration');
  h = db.handle;
  env = cliEnv({ dbUrl: db.url, home }, 'redteam-registration-');
  const suite = path.join(home, 'suite.json');
  fs.writeFileSync(suite, JSON.stringify(SUITE));
  expect(await runCli(env, ['suite', 'add', suite])).toMatchObject({ status: 0, stdout: 'redteam@1\n' });
});
afterAll(async () => h?.close());

test("a dataset holding a held-out item's prompt and reference is refused at registration", async () => {
  const before = await written();
  const file = dataset('heldout.jsonl', [{ prompt: HELDOUT_ITEM.prompt, completion: HELDOUT_ITEM.reference }]);
  await expectRefused(
    await runCli(env, ['dataset', 'add', 'heldout', file]),
    before,
    `flywheel: ${file}:2: prompt: overlaps held-out item redteam@1/h1 (13-gram "export functi")`,
  );
});

test('a dataset holding a probe item, as chat messages, is refused at registration', async () => {
  const before = await written();
  const file = dataset('probe.jsonl', [
    {
      messages: [
        { role: 'user', content: TWIN_ITEM.prompt },
        { role: 'assistant', content: TWIN_ITEM.reference },
      ],
    },
  ]);
  await expectRefused(
    await runCli(env, ['dataset', 'add', 'probe', file]),
    before,
    `flywheel: ${file}:2: messages.0.content: overlaps probe item redteam@1/t1 (13-gram "function clam")`,
  );
});

test('a dataset carrying a canary or a held-out canary is refused by the canary’s name, its text never printed', async () => {
  const before = await written();
  const pub = dataset('canary.jsonl', [{ prompt: 'Say the marker: ', completion: `ok ${CANARY}` }]);
  await expectRefused(
    await runCli(env, ['dataset', 'add', 'canary', pub]),
    before,
    `flywheel: ${pub}:2: completion: carries canary redteam@1#canary0`,
  );
  const held = dataset('heldout-canary.jsonl', [{ prompt: `${HELDOUT_CANARY}\n`, completion: 'x' }]);
  const r = await runCli(env, ['dataset', 'add', 'heldoutcanary', held]);
  await expectRefused(r, before, `flywheel: ${held}:2: prompt: carries canary redteam@1#heldout-canary0`);
  expect(r.stderr).not.toContain(HELDOUT_CANARY.slice(0, 12));
});

test('a suite with a 60 MB prompt is refused within 256 MB of heap, nothing stored', async () => {
  const file = path.join(home, 'huge-prompt.json');
  const prompt = 'x'.repeat(60 << 20);
  fs.writeFileSync(
    file,
    JSON.stringify({ name: 'huge', items: [{ id: 'big', split: 'public', grader: { kind: 'exact_match' }, prompt, reference: 'y' }] }),
  );
  const suites = async () => (await h.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM eval_items`)).rows[0].n;
  const before = await suites();
  const r = await runCli({ ...env, NODE_OPTIONS: '--max-old-space-size=256' }, ['suite', 'add', file]);
  expect(r).toMatchObject({ status: 2, stdout: '' });
  expect(r.stderr.trimEnd().split('\n')).toEqual([
    `flywheel: ${file}: malformed eval suite "huge", 1 failing item(s): items[0] "big": prompt: ${60 << 20} bytes, more than a field may be (1 MiB)`,
  ]);
  expect(await suites()).toBe(before);
}, 300_000);
