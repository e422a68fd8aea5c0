// A host that cannot make the sandbox (here: FLYWHEEL_BWRAP names a program that does not exist, set before the
// whole file): a campaign with its own trainer is refused at its first launch,
// before any trainer starts, with one line naming the fix; the built-in trainer still runs (without a sandbox, and
// says so in isolation.json); a campaign that sets trainer.unsandboxed runs, with the environment allow-list.
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { sandboxStatusLine } from '../../backends/sandbox/bubblewrap';
import { trainingRuns } from '../../db/schema';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fastBuiltinSpec, fixtureSpec, uniqueName } from '../helpers/specs';
import { launchDirOf } from '../../backends/run-dir-files';

let harness: LoopHarness;
beforeAll(async () => {
  process.env.FLYWHEEL_BWRAP = '/nonexistent/bwrap';
  harness = await loopHarness('no-sandbox');
});
afterAll(async () => {
  delete process.env.FLYWHEEL_BWRAP;
  await harness?.close();
});

const runsOf = async (campaignId: string) =>
  (await harness.db.db.select().from(trainingRuns)).filter((r) => r.experimentId.startsWith(`${campaignId}/`));

test('the workers say in one line that there is no sandbox, and what user-supplied trainers need', () => {
  expect(sandboxStatusLine()).toBe(
    'trainer sandbox: none: bubblewrap cannot make namespaces here: spawnSync /nonexistent/bwrap ENOENT; user-supplied trainers are refused unless their spec sets trainer.unsandboxed: true',
  );
});

test('a campaign with its own trainer is refused before anything starts', async () => {
  const workers = await harness.workers('t-nosbx');
  const id = uniqueName('nosbx-custom');
  const err = await (
    await workers.startLoop(id, {
      ...fixtureSpec(id, { steps: 5 }),
      trainer: { command: [process.execPath, path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js')] },
    })
  )
    .result()
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowFailedError);
  expect(JSON.stringify((err as WorkflowFailedError).cause)).toContain('no sandbox for the trainer on this host');
  expect(JSON.stringify((err as WorkflowFailedError).cause)).toContain('set trainer.unsandboxed: true to run it anyway');
  expect(await runsOf(id)).toEqual([]);
  await workers.stop();
}, 120_000);

test('with trainer.unsandboxed the same campaign runs, and its runs say so', async () => {
  const workers = await harness.workers('t-nosbx-u');
  const id = uniqueName('nosbx-unsandboxed');
  const spec = {
    ...fixtureSpec(id, { steps: 5 }),
    trainer: { command: [process.execPath, path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js')], unsandboxed: true },
  };
  await (await workers.startLoop(id, spec)).result();
  const runs = await runsOf(id);
  expect(runs.length).toBeGreaterThanOrEqual(2);
  for (const r of runs)
    expect(JSON.parse(fs.readFileSync(path.join(launchDirOf(r.runDir), 'isolation.json'), 'utf8'))).toEqual({
      sandbox: 'none',
      reason: 'trainer.unsandboxed is set',
    });
  await workers.stop();
}, 120_000);

test("the built-in trainer, Flywheel's own code, runs without the sandbox and records why", async () => {
  const workers = await harness.workers('t-nosbx-b');
  const id = uniqueName('nosbx-builtin');
  await (
    await workers.startLoop(
      id,
      fastBuiltinSpec(id, { innerLoop: { budget: { experiments: 1, parallelism: 1 }, batchSize: 1, startupTrials: 1 } }),
    )
  ).result();
  const [run] = (await runsOf(id)).filter((r) => r.experimentId.endsWith('/e0'));
  const isolation = JSON.parse(fs.readFileSync(path.join(launchDirOf(run.runDir), 'isolation.json'), 'utf8')) as {
    sandbox: string;
    reason: string;
  };
  expect(isolation.sandbox).toBe('none');
  expect(isolation.reason).toMatch(/^the built-in trainer runs without one: bubblewrap cannot make namespaces here/);
  expect(run.status).toBe('succeeded');
  await workers.stop();
}, 180_000);
