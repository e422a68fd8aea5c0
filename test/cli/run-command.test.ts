// `flywheel run` / `status` as a user runs them: a real CLI process against the test servers.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { sql } from 'drizzle-orm';
import YAML from 'yaml';
import type { DbHandle } from '../../db/client';
import { campaigns } from '../../db/schema';
import { latestInnerLoop } from '../../services/campaign-loops';
import { cliEnv, FLYWHEEL_BIN, runCli } from '../helpers/cli';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
let db: DbHandle;
let client: Client;
let home: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  harness = await loopHarness('cli');
  ({ db, client, home } = harness);
  const workers = await harness.workers('t-cli');
  env = cliEnv(harness, workers.prefix);
});
afterAll(() => harness?.close());

const cli = (args: string[]) => runCli(env, args);

function writeSpec(spec: unknown): string {
  const file = path.join(home, `${uniqueName('spec')}.yaml`);
  fs.writeFileSync(file, YAML.stringify(spec));
  return file;
}

test('an invalid spec is refused with the paths of its errors, and nothing is written', async () => {
  const name = uniqueName('bad');
  const bad = {
    ...fastBuiltinSpec(name),
    innerLoop: { budget: { experiments: 0 } },
    searchSpace: { lr: { type: 'float', low: 1, high: 0.1 } },
  };
  const r = await cli(['run', writeSpec(bad)]);
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('innerLoop.budget.experiments: must be at least 1');
  expect(r.stderr).toContain('searchSpace.lr.high: high must be at least low');
  const [{ n }] = await db.db.select({ n: sql<number>`count(*)::int` }).from(campaigns);
  expect(n).toBe(0);
  expect(await latestInnerLoop(client, name)).toBeUndefined();
});

test('Ctrl-C detaches without stopping the loop; `flywheel status` reattaches and prints the result', async () => {
  const name = uniqueName('cli');
  // Long enough (one experiment at a time, 1500+ steps each) that the loop is still running when Ctrl-C lands.
  const spec = fastBuiltinSpec(name, { innerLoop: { budget: { experiments: 2, parallelism: 1 }, batchSize: 1 } });
  spec.searchSpace.steps = { type: 'int', low: 1500, high: 1600 };
  const file = writeSpec(spec);
  const run = spawn(process.execPath, [FLYWHEEL_BIN, 'run', file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  run.stderr.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no "started" line: ${err}`)), 30_000);
    run.stderr.on('data', () => err.includes('started ') && (clearTimeout(t), resolve()));
  });
  run.kill('SIGINT');
  const code = await new Promise<number | null>((r) => run.once('exit', r));
  expect(code).toBe(0);
  expect(err).toContain('detached');
  const handle = (await latestInnerLoop(client, name))!;
  expect((await handle.describe()).status.name).toBe('RUNNING');

  const status = await cli(['status', name, '--json']);
  expect(status.status).toBe(0);
  const result = JSON.parse(status.stdout);
  expect(result.experiments).toBe(2);
  expect(result.heldout.best.bits_per_byte).toBeLessThan(result.heldout.baseline.bits_per_byte);
  expect((await handle.describe()).status.name).toBe('COMPLETED');
});
