// The inner loop steered by a stream of setBudget updates while its experiments run: many replies land in the same
// workflow task as a proposal batch or a child's result, and the loop's next command must keep its place after them.
// Its history (inner-loop-updates.json in test/histories/) is the replay suite's guard on that order: a step that
// awaits one more microtask before it schedules (an `async` wrapper around proposeBatch, say) fails to replay it.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { pauseSignal, proposePatchUpdate, resumeSignal, setBudgetUpdate, statusQuery } from '../../contracts/inner-loop';
import { recipePatches } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { cliEnv, runCli } from '../helpers/cli';
import { scratchDir } from '../helpers/env';
import { eventually, loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { saveHistory } from '../helpers/histories';
import { fixtureSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
let workers: LoopWorkers;
beforeAll(async () => {
  harness = await loopHarness('update-order');
  workers = await harness.workers('t-uord');
});
afterAll(() => harness?.close());

test('a loop answers a stream of budget updates and finishes its budget', async () => {
  const id = uniqueName('updates');
  const h = await workers.startLoop(
    id,
    fixtureSpec(id, { steps: 2 }, { budget: { experiments: 4, parallelism: 2 }, batchSize: 2, plateau: { patience: 10 } }),
  );
  let done = false;
  const result = h.result().finally(() => (done = true));
  let sent = 0;
  while (!done) {
    // Refused while the loop prepares or once it has ended; each accepted one is a reply in the history.
    await Promise.all(
      [0, 1].map(() => h.executeUpdate(setBudgetUpdate, { args: [{ parallelism: 1 + (sent++ % 2) }] }).catch(() => undefined)),
    );
  }
  expect((await result).experiments).toBe(4);
  expect(saveHistory('inner-loop-updates', h.workflowId)).toBeGreaterThan(20);
});

// `flywheel propose` stores a researcher's patch and sends its id: the loop queues it, grows its next batch to hold
// every queued one (the proposer takes them first), and refuses one the budget has no room for. The history
// (inner-loop-patches.json in test/histories/) keeps the update's place among the loop's commands under replay.
test('researcher patches queued by proposePatch join the next batch, within the budget', async () => {
  const id = uniqueName('patches');
  const h = await workers.startLoop(
    id,
    fixtureSpec(id, { steps: 2, sleepMs: 4000 }, { budget: { experiments: 4, parallelism: 1 }, batchSize: 1, plateau: { patience: 10 } }),
  );
  const send = (patchId: string) => h.executeUpdate(proposePatchUpdate, { args: [{ patchId }] });
  const refusal = (message: RegExp) => ({ cause: { message: expect.stringMatching(message) } });
  await eventually('the first experiment running', async () =>
    (await h.query(statusQuery).catch(() => undefined))?.running.length ? true : undefined,
  );
  expect(await send('p1')).toMatch(/^p1 queued for the next batch of .*\/inner\/1 \(1 queued\)$/);
  await expect(send('p1')).rejects.toMatchObject(refusal(/p1 is already queued/));
  await send('p2');
  await send('p3');
  // 1 launched and 3 queued fill the budget of 4.
  await expect(send('p4')).rejects.toMatchObject(refusal(/no experiment left in the budget \(1 of 4 launched, 3 queued\)/));
  expect((await h.query(statusQuery)).queuedPatches).toEqual(['p1', 'p2', 'p3']);
  expect((await h.result()).experiments).toBe(4);
  const events = (await h.fetchHistory()).events ?? [];
  const proposals = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'proposeExperiments');
  // The second batch held all three (batchSize 1), so there was no third.
  expect(proposals).toHaveLength(2);
  expect((await h.query(statusQuery)).queuedPatches).toEqual([]);
  expect(saveHistory('inner-loop-patches', h.workflowId)).toBeGreaterThan(20);
});

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js');
const KNOBS_PY = 'WARMUP_STEPS = 0\n';
const diffOf = (file: string, from: string, to: string) =>
  `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-${from}\n+${to}\n`;

// `flywheel propose` end to end against a running loop of a recipe campaign: a patch outside `mutable` is one line
// and exit 2 with nothing stored; a good one is stored as the researcher's queued patch and its id sent to the loop;
// the same change again is the duplicate rule's refusal.
test('`flywheel propose` checks a patch against the running loop, stores it queued and tells the loop', async () => {
  const id = uniqueName('propose');
  const folder = path.join(scratchDir('propose-recipe'), 'recipe');
  fs.mkdirSync(folder, { recursive: true });
  fs.copyFileSync(FIXTURE, path.join(folder, 'fixture-trainer.js'));
  fs.writeFileSync(path.join(folder, 'knobs.py'), KNOBS_PY);
  const base = fixtureSpec(
    id,
    { steps: 2, sleepMs: 2000 },
    { budget: { experiments: 3, parallelism: 1 }, batchSize: 1, plateau: { patience: 10 } },
  );
  const spec = {
    ...base,
    trainer: {
      ...base.trainer,
      command: [process.execPath, '{recipe}/fixture-trainer.js'],
      recipe: { path: folder, mutable: ['knobs.py'] },
    },
  };
  const { versionId } = await registerCampaignVersion(harness.db.db, spec, undefined, harness.home);
  const h = await harness.client.workflow.start('innerLoop', {
    taskQueue: `${workers.prefix}-orchestration`,
    workflowId: `${id}/inner/1`,
    args: [{ campaignVersionId: versionId }],
  });
  const env = cliEnv(harness, workers.prefix, { USER: 'ada' });
  const dir = scratchDir('propose-patches');
  const file = (name: string, text: string) => (fs.writeFileSync(path.join(dir, name), text), path.join(dir, name));
  await eventually('the first experiment running', async () =>
    (await h.query(statusQuery).catch(() => undefined))?.running.length ? true : undefined,
  );
  // Paused, the loop proposes nothing more while the commands (seconds each on a loaded machine) run.
  await h.signal(pauseSignal);

  const outside = await runCli(env, [
    'propose',
    id,
    '--patch',
    file('outside.diff', diffOf('fixture-trainer.js', '#!/usr/bin/env node', '#!/bin/sh')),
  ]);
  expect(outside).toEqual({
    status: 2,
    stdout: '',
    stderr: `flywheel: ${path.join(dir, 'outside.diff')}: refused by mutable: the patch touches fixture-trainer.js, which is not in trainer.recipe.mutable\n`,
  });
  expect(await harness.db.db.select().from(recipePatches).where(eq(recipePatches.campaignId, id))).toEqual([]);

  // --params: each a knob of the search space with a value it allows, checked before the patch: one line, exit 2.
  const warmup = file('warmup.diff', diffOf('knobs.py', 'WARMUP_STEPS = 0', 'WARMUP_STEPS = 50'));
  expect(await runCli(env, ['propose', id, '--patch', warmup, '--params', 'stpes=2'])).toEqual({
    status: 2,
    stdout: '',
    stderr: 'flywheel: --params stpes: not a knob of the search space (did you mean "steps"? its knobs: steps, sleepMs)\n',
  });
  expect(await runCli(env, ['propose', id, '--patch', warmup, '--params', 'steps=3'])).toEqual({
    status: 2,
    stdout: '',
    stderr: 'flywheel: --params steps: 3 is not one of 2\n',
  });
  expect(await harness.db.db.select().from(recipePatches).where(eq(recipePatches.campaignId, id))).toEqual([]);

  const ok = await runCli(env, [
    'propose',
    id,
    '--patch',
    warmup,
    '--hypothesis',
    'warm up over 50 steps',
    '--params',
    'steps=2',
    '--json',
  ]);
  expect(ok.stderr).toBe('');
  expect(ok.status).toBe(0);
  const out = JSON.parse(ok.stdout) as { patchId: string; reply: string; summary: string; params: unknown };
  expect(out.params).toEqual({ steps: 2 });
  expect(out.reply).toBe(`${out.patchId} queued for the next batch of ${h.workflowId} (1 queued)`);
  expect(out.summary).toBe('knobs.py +1 -1');
  const rows = await harness.db.db.select().from(recipePatches).where(eq(recipePatches.campaignId, id));
  expect(rows).toMatchObject([
    {
      id: out.patchId,
      innerLoopId: h.workflowId,
      status: 'queued',
      proposer: 'researcher:ada',
      hypothesis: 'warm up over 50 steps',
      params: { steps: 2 },
      experimentId: null,
    },
  ]);
  expect((await h.query(statusQuery)).queuedPatches).toEqual([out.patchId]);

  const again = await runCli(env, ['propose', id, '--patch', warmup]);
  expect(again.status).toBe(2);
  expect(again.stderr).toMatch(/refused by duplicate: the same change was tried before/);
  expect(await runCli(env, ['propose', 'no-such-campaign', '--patch', warmup])).toMatchObject({
    status: 2,
    stderr: 'flywheel: no running inner loop for campaign "no-such-campaign" (`flywheel run SPEC` starts one)\n',
  });
  await h.signal(resumeSignal);
  expect((await h.result()).experiments).toBe(3);
});
