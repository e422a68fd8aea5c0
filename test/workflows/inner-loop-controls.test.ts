// Steering a running inner loop: approval of proposals, budget changes, pause and resume (also sent while the loop
// prepares), and a loop that continues as new mid-search without losing its leaderboard or its count.
import type { Client, WorkflowHandle } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { experiments } from '../../db/schema';
import {
  approveProposalUpdate,
  leaderboardQuery,
  pauseSignal,
  resumeSignal,
  setBudgetUpdate,
  statusQuery,
  type InnerLoopStatus,
} from '../../contracts/inner-loop';
import { eventually, loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { saveHistory } from '../helpers/histories';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';

let harness: LoopHarness;
let db: DbHandle;
let client: Client;
let workers: LoopWorkers;

beforeAll(async () => {
  harness = await loopHarness('controls');
  ({ db, client } = harness);
  workers = await harness.workers('t-ctl');
});
afterAll(() => harness?.close());

const statusUntil = (h: WorkflowHandle, what: string, ok: (s: InnerLoopStatus) => boolean): Promise<InnerLoopStatus> =>
  eventually(what, async () => {
    const s = await h.query(statusQuery).catch(() => undefined);
    return s && ok(s) ? s : undefined;
  });

const start = (id: string, spec: unknown, extra?: Record<string, unknown>) => workers.startLoop(id, spec, extra);

test('proposals wait for approval; an approved one runs, a rejected one is recorded, a wrong id is refused', async () => {
  const id = uniqueName('approve');
  const h = await start(
    id,
    fixtureSpec(id, { steps: 3, offset: 0 }, { budget: { experiments: 2, parallelism: 2 }, batchSize: 2, requireApproval: true }),
  );
  const s = await statusUntil(h, 'two proposals awaiting approval', (x) => x.awaitingApproval.length === 2);
  await expect(
    h.executeUpdate(approveProposalUpdate, { args: [{ experimentId: `${id}/inner/1/e9`, approve: true }] }),
  ).rejects.toMatchObject({ cause: { message: expect.stringMatching(/not awaiting approval/) } });
  const [first, second] = [...s.awaitingApproval].sort();
  expect(await h.executeUpdate(approveProposalUpdate, { args: [{ experimentId: first, approve: true }] })).toBe(`approved ${first}`);
  await h.executeUpdate(approveProposalUpdate, { args: [{ experimentId: second, approve: false }] });
  const result = await h.result();
  expect(result.best?.experimentId).toBe(first);
  const [rejected] = await db.db.select().from(experiments).where(eq(experiments.id, second));
  expect(rejected.status).toBe('rejected');
  expect(rejected.error).toBe('rejected by a researcher');
});

test('budget changes are validated; pause holds new experiments until resume', async () => {
  const id = uniqueName('budget');
  const h = await start(
    id,
    fixtureSpec(id, { steps: 20, sleepMs: 1500 }, { budget: { experiments: 1, parallelism: 1 }, batchSize: 1, plateau: { patience: 10 } }),
  );
  await statusUntil(h, 'the first experiment running', (x) => x.running.length === 1);
  await expect(h.executeUpdate(setBudgetUpdate, { args: [{ experiments: 0 }] })).rejects.toMatchObject({
    cause: { message: expect.stringMatching(/at least 1 \(already launched\)/) },
  });
  await h.signal(pauseSignal);
  expect(await h.executeUpdate(setBudgetUpdate, { args: [{ experiments: 2 }] })).toEqual({ experiments: 2, parallelism: 1 });
  // The running experiment finishes; while paused nothing new is proposed or started.
  const paused = await statusUntil(h, 'the first experiment to finish while paused', (x) => x.running.length === 0 && x.best !== undefined);
  expect(paused.phase).toBe('paused');
  await new Promise((r) => setTimeout(r, 1500));
  const still = await h.query(statusQuery);
  expect(still.running).toEqual([]);
  expect(still.launched).toBe(1);
  await h.signal(resumeSignal);
  const result = await h.result();
  expect(result.experiments).toBe(2);
  const board = await h.query(leaderboardQuery);
  expect(board.filter((e) => e.status === 'succeeded')).toHaveLength(2);
});

test('a pause sent while the loop prepares is kept: no experiment starts until resume', async () => {
  const id = uniqueName('early');
  const spec = fixtureSpec(id, { steps: 2 }, { budget: { experiments: 1, parallelism: 1 }, batchSize: 1 });
  // signalWithStart delivers the pause in the loop's first workflow task, before it has prepared anything.
  const h = await client.workflow.signalWithStart('innerLoop', {
    taskQueue: `${workers.prefix}-orchestration`,
    workflowId: `${id}/inner/1`,
    args: [{ campaignVersionId: (await registerCampaignVersion(db.db, spec)).versionId }],
    signal: pauseSignal,
    signalArgs: [],
  });
  const prepared = await statusUntil(h, 'the loop to finish preparing', (x) => x.phase !== 'preparing');
  expect(prepared).toMatchObject({ phase: 'paused', launched: 0 });
  // The baseline is no proposal: it trains, and still nothing is proposed while the loop is paused.
  await eventually('the baseline to finish', async () =>
    (
      await db.db
        .select()
        .from(experiments)
        .where(eq(experiments.id, `${id}/inner/1/baseline`))
    )[0]?.status === 'succeeded'
      ? true
      : undefined,
  );
  expect(await h.query(statusQuery)).toMatchObject({ phase: 'paused', launched: 0 });
  expect(await db.db.select().from(experiments).where(eq(experiments.innerLoopId, h.workflowId))).toHaveLength(1);
  await h.signal(resumeSignal);
  expect((await h.result()).experiments).toBe(1);
  saveHistory('inner-loop-early-pause', h.workflowId);
});

test('a loop that continues as new keeps its count, its best and its leaderboard', async () => {
  const id = uniqueName('can');
  const h = await start(
    id,
    fixtureSpec(id, { steps: 2 }, { budget: { experiments: 3, parallelism: 1 }, batchSize: 1, plateau: { patience: 10 } }),
    { historyEventsLimit: 5 },
  );
  const result = await h.result();
  expect(result.experiments).toBe(3);
  const desc = await h.describe();
  // Each batch ended past the limit, so the last run is the third execution of the same workflow id.
  expect(desc.runId).not.toBe(h.firstExecutionRunId);
  const board = await client.workflow.getHandle(h.workflowId).query(leaderboardQuery);
  expect(board.map((e) => e.index).sort()).toEqual([0, 1, 2]);
  const rows = await db.db.select().from(experiments).where(eq(experiments.innerLoopId, h.workflowId));
  expect(rows).toHaveLength(4); // three trials and the baseline, each once
});
