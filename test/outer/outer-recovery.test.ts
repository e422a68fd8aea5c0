// A campaign that never wedges: an iteration whose baseline fails (a custom trainer that exits 2) ends its row
// `failed` with the reason; the next start, with the honest built-in trainer, is a new attempt of the iteration with
// ids and run directories of its own; an attempt whose workflow is terminated is ended by the next start's claim,
// which makes a third attempt that succeeds.
import fs from 'node:fs';
import { WorkflowFailedError } from '@temporalio/client';
import { eq, inArray, like } from 'drizzle-orm';
import { experiments, feedbackEvents, outerIterations, trainingRuns } from '../../db/schema';
import { storeFeedback } from '../../services/feedback-store';
import { outerStatusQuery, type OuterLoopResult } from '../../contracts/outer-loop';
import { saveHistory } from '../helpers/histories';
import { eventually, loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';
import { launchDirOf } from '../../backends/run-dir-files';

let h: LoopHarness;
let w: LoopWorkers;
const name = uniqueName('recover');
const good = fastBuiltinSpec(name, {
  innerLoop: { budget: { experiments: 1, parallelism: 1 }, batchSize: 1 },
  outerLoop: { innerBudget: { experiments: 1 } },
} as never);
const broken = { ...good, trainer: { command: [process.execPath, '-e', 'process.exit(2)'] } };

beforeAll(async () => {
  h = await loopHarness('recovery');
  w = await h.workers('t-recover');
});
afterAll(() => h?.close());

const start = async (id: string, spec?: unknown) =>
  h.client.workflow.start('outerLoop', {
    taskQueue: `${w.prefix}-orchestration`,
    workflowId: `${name}/outer/${id}`,
    args: [{ campaignId: name, trigger: 'cli', ...(spec ? { campaignVersionId: await h.version(spec) } : {}) }],
  });
const rowsOf = () => h.db.db.select().from(outerIterations).where(eq(outerIterations.campaignId, name)).orderBy(outerIterations.attempt);

test('a failed iteration ends its row with the reason', async () => {
  await storeFeedback(h.db.db, [
    { id: `${name}-fb-1`, campaignId: name, kind: 'edit', modelVersion: 'v0', prompt: 'const a = ', output: 'b', correction: '1;\n' },
  ]);
  const handle = await start('broken', broken);
  const failure = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  const [row] = await rowsOf();
  expect(row).toMatchObject({ id: `${name}/outer/i1`, iteration: 1, attempt: 1, status: 'failed', innerLoopId: `${name}/outer/i1/inner` });
  expect(row.finishedAt).not.toBeNull();
  expect(row.summary?.reason).toMatch(
    /^innerLoop .*\/outer\/i1\/inner failed: the untrained baseline failed: the trainer exited with code 2/,
  );
  saveHistory('outer-loop-iteration-failure', handle.workflowId);
}, 240_000);

test('a terminated attempt is ended by the next start, which trains the iteration again under its own ids', async () => {
  // The honest trainer, but the workflow is terminated mid-inner-loop: nothing in it can end its row.
  const doomed = await start('terminated', good);
  await eventually(
    'the second attempt in its inner loop',
    async () => ((await doomed.query(outerStatusQuery).catch(() => undefined))?.phase === 'inner-loop' ? true : undefined),
    120_000,
  );
  await doomed.terminate('a researcher stopped it');
  expect((await rowsOf()).map((r) => [r.attempt, r.status])).toEqual([
    [1, 'failed'],
    [2, 'running'],
  ]);

  const r = (await (await start('again')).result()) as OuterLoopResult;
  const it = r.iterations[0];
  expect(it).toMatchObject({
    iteration: 1,
    outerIterationId: `${name}/outer/i1-a3`,
    innerLoopId: `${name}/outer/i1-a3/inner`,
    newFeedback: 1,
  });
  expect(['promoted', 'rejected']).toContain(it.status);

  const rows = await rowsOf();
  expect(rows.map((x) => [x.id, x.attempt, x.status])).toEqual([
    [`${name}/outer/i1`, 1, 'failed'],
    [`${name}/outer/i1-a2`, 2, 'failed'],
    [`${name}/outer/i1-a3`, 3, it.status],
  ]);
  expect(rows[1].summary?.reason).toBe(`its workflow ${name}/outer/terminated ended terminated before the iteration finished`);
  // The feedback the first attempt ingested is the last one's.
  const [event] = await h.db.db
    .select()
    .from(feedbackEvents)
    .where(eq(feedbackEvents.id, `${name}-fb-1`));
  expect(event.ingestedBy).toBe(it.outerIterationId);
  // Every run of the last attempt is its own, launched once and succeeded: nothing of the failed attempts' reused.
  const exps = await h.db.db.select().from(experiments).where(eq(experiments.innerLoopId, it.innerLoopId!));
  expect(exps.length).toBe(2); // one trial and the baseline
  const runs = await h.db.db
    .select()
    .from(trainingRuns)
    .where(
      inArray(
        trainingRuns.experimentId,
        exps.map((e) => e.id),
      ),
    );
  expect(runs.map((x) => [x.id.slice(it.innerLoopId!.length), x.status, x.launches]).sort()).toEqual([
    ['/baseline/r1', 'succeeded', 1],
    ['/e0/r1', 'succeeded', 1],
  ]);
  for (const x of runs) expect(fs.readFileSync(`${launchDirOf(x.runDir)}/exit_code`, 'utf8').trim()).toBe('0');
  const broken1 = await h.db.db
    .select()
    .from(trainingRuns)
    .where(like(trainingRuns.id, `${name}/outer/i1/inner/%`));
  expect(broken1.length).toBeGreaterThan(0);
  expect(broken1.every((x) => x.status === 'failed')).toBe(true);
}, 360_000);
