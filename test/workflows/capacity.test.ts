// Capacity slots and the cost ledger on the real dev server and PostgreSQL: a campaign's jobs never overlap past
// `backend.maxConcurrent`, the wait is recorded and is inside one activity in the history (no workflow timers), a killed
// worker's wait resumes, a cancelled loop leaks no slot, and the cost cap stops the loop.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { CancelledFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { MockActivityEnvironment } from '@temporalio/testing';
import { eq, like, sql } from 'drizzle-orm';
import { acquireCapacity, capacityTiming } from '../../activities/capacity/acquire-capacity';
import type { CapacityGrant } from '../../contracts/training';
import { heldSlots, tryAcquireSlot } from '../../services/capacity';
import { releaseCapacity } from '../../activities/capacity/release-capacity';
import { campaignSpend, checkBudget } from '../../services/cost-ledger';
import type { ActivityDeps } from '../../activities/deps';
import { formatResult } from '../../cli/print-result';
import { groupMembers } from '../../backends/local/process-liveness';
import { parseSpec } from '../../tasks/task-spec';
import { openDb, type DbHandle } from '../../db/client';
import { capacity, capacitySlots, costLedger, experiments, metricPoints, trainingRuns } from '../../db/schema';
import type { InnerLoopResult } from '../../contracts/inner-loop';
import { cliEnv } from '../helpers/cli';
import { saveHistory } from '../helpers/histories';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';

const REPO = path.join(__dirname, '..', '..');
let harness: LoopHarness;
let db: DbHandle;

beforeAll(async () => {
  harness = await loopHarness('capacity');
  ({ db } = harness);
});
afterAll(() => harness?.close());

const runsOfLoop = (wf: string) =>
  db.db
    .select()
    .from(trainingRuns)
    .where(like(trainingRuns.experimentId, `${wf}/%`));
const expsOfLoop = (wf: string) => db.db.select().from(experiments).where(eq(experiments.innerLoopId, wf));

/** Activity-type names of the ActivityTaskScheduled events and the timer count in a workflow's history. */
async function historyShape(workflowId: string) {
  const history = await harness.client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  return {
    total: events.length,
    scheduled: events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter((n): n is string => !!n),
    timers: events.filter((e) => e.timerStartedEventAttributes).length,
    /** Local activities, by type, from their markers. */
    localActivities: events
      .filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')
      .map((e) => localActivityType(e.markerRecordedEventAttributes!.details)),
    /** The attempt that completed each activity, by activity type. */
    attempts: Object.fromEntries(
      events
        .filter((e) => e.activityTaskStartedEventAttributes)
        .map((e) => {
          const scheduledId = String(e.activityTaskStartedEventAttributes!.scheduledEventId);
          const scheduled = events.find((x) => String(x.eventId) === scheduledId);
          return [
            scheduled?.activityTaskScheduledEventAttributes?.activityType?.name ?? '?',
            e.activityTaskStartedEventAttributes!.attempt ?? 1,
          ];
        }),
    ) as Record<string, number>,
  };
}

/** The activity type a local activity's marker names (its `data` detail: JSON naming `activity_type`). */
function localActivityType(details: Record<string, { payloads?: { data?: Uint8Array | null }[] | null }> | null | undefined): string {
  const data = details?.data?.payloads?.[0]?.data;
  if (!data) return '?';
  const marker = JSON.parse(Buffer.from(data).toString()) as { activity_type?: string; activityType?: string };
  return marker.activity_type ?? marker.activityType ?? '?';
}

/** Each run's [start, end] span, in start order: the next starts only after the previous ended. */
function expectNoOverlap(runs: { startedAt: Date; endedAt: Date | null }[]): void {
  const spans = runs.map((r) => [r.startedAt.getTime(), r.endedAt!.getTime()]).sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[i - 1][1]);
}

test('maxConcurrent 1: parallel experiments take turns, the wait is recorded, one acquire per attempt, priced runs', async () => {
  const workers = await harness.workers('t-turns');
  const id = uniqueName('turns');
  const wf = `${id}/inner/1`;
  const spec = {
    ...fixtureSpec(id, { steps: 10, sleepMs: 1500 }, { budget: { experiments: 2, parallelism: 2 }, batchSize: 2 }),
    backend: { kind: 'local', maxConcurrent: 1 },
    budget: { gpusPerJob: 2, gpuHourUsd: { default: 1, a100: 3.6 }, gpuType: 'a100' },
  };
  try {
    const result: InnerLoopResult = await (await workers.startLoop(id, spec)).result();
    expect(result.experiments).toBe(2);
    expect(result.stoppedBy).toBe('budget');
    expect(result.budgetExceeded).toBeUndefined();
  } finally {
    await workers.stop();
  }
  const runs = await runsOfLoop(wf);
  expect(runs).toHaveLength(3); // the baseline first, then e0 and e1 in parallel in the workflow
  expectNoOverlap(runs);
  const exps = await expsOfLoop(wf);
  for (const e of exps) {
    expect(e.capacityWaitSeconds).not.toBeNull();
    const run = runs.find((r) => r.experimentId === e.id)!;
    expect(run.capacityWaitSeconds).toBeCloseTo(e.capacityWaitSeconds!, 6);
  }
  // Three runs, one slot: whatever the order, the last granted waited for the other two, one of them a 1.5 s run.
  const waits = exps.map((e) => e.capacityWaitSeconds!).sort((a, b) => a - b);
  expect(waits[2]).toBeGreaterThan(1.5);

  const waited = exps.find((e) => e.capacityWaitSeconds === waits[2])!;
  const shape = await historyShape(waited.id);
  // The wait, the launch, the run and the release are one activity (runTraining); finishExperiment is a local one.
  expect(shape.scheduled).toEqual(
    ['runTraining', 'scoreCheckpoint'].filter((n) => !(waited.proposer === 'baseline' && n === 'scoreCheckpoint')),
  );
  expect(shape.localActivities).toEqual(['finishExperiment']);
  expect(shape.timers).toBe(0);
  expect(await heldSlots(db.db, { campaignId: id })).toBe(0);
  saveHistory('experiment-fewer-round-trips', waited.id);

  // One ledger row per run: trainer seconds × 2 GPUs at the a100 price.
  const ledger = await db.db.select().from(costLedger).where(eq(costLedger.campaignId, id));
  expect(ledger.map((l) => l.id).sort()).toEqual(runs.map((r) => `${r.id}/gpu`).sort());
  for (const l of ledger) {
    const run = runs.find((r) => `${r.id}/gpu` === l.id)!;
    expect(l.kind).toBe('gpu');
    expect(l.backend).toBe('local');
    expect(l.gpuType).toBe('a100');
    expect(l.unitPriceUsd).toBe(3.6);
    expect(l.quantity).toBeCloseTo(run.trainerSeconds! * 2, 6);
    expect(l.amountUsd).toBeCloseTo((run.trainerSeconds! * 2 * 3.6) / 3600, 9);
  }
  expect(await campaignSpend(db.db, id)).toBeCloseTo(
    ledger.reduce((s, l) => s + l.amountUsd, 0),
    9,
  );
}, 180_000);

describe('acquireCapacity as an activity', () => {
  const deps = (): ActivityDeps => ({ db: db.db, home: harness.home });
  async function campaignWith(
    maxConcurrent: number,
    experimentsCount: number,
    kind = 'local',
  ): Promise<{ id: string; exp: (i: number) => string }> {
    const id = uniqueName('slots');
    const spec = { name: id, searchSpace: { x: { type: 'float', low: 0, high: 1 } }, backend: { kind, maxConcurrent } };
    const { versionId: campaignVersionId } = await registerCampaignVersion(db.db, spec);
    const exp = (i: number) => `${id}/inner/1/e${i}`;
    for (let i = 0; i < experimentsCount; i++) {
      await db.db.insert(experiments).values({
        id: exp(i),
        campaignId: id,
        campaignVersionId,
        innerLoopId: `${id}/inner/1`,
        index: i,
        datasetVersionId: 'none',
        params: {},
        proposer: 'test',
        status: 'proposed',
      });
    }
    return { id, exp };
  }
  const acquire = (experimentId: string, attempt = 1) => {
    const env = new MockActivityEnvironment({ scheduledTimestampMs: Date.now(), heartbeatTimeoutMs: 10_000 });
    return { env, grant: env.run(acquireCapacity, deps(), { experimentId, attempt }) as Promise<CapacityGrant> };
  };

  test('a retried acquire for the same run returns the slot it holds, not a second one', async () => {
    const { id, exp } = await campaignWith(2, 2);
    const first = await acquire(exp(0)).grant;
    const again = await acquire(exp(0)).grant;
    expect(again).toEqual(first);
    expect(await heldSlots(db.db, { campaignId: id })).toBe(1);
    // The second slot is still free for another run.
    await acquire(exp(1)).grant;
    expect(await heldSlots(db.db, { campaignId: id })).toBe(2);
    const [row] = await db.db
      .select()
      .from(experiments)
      .where(eq(experiments.id, exp(0)));
    expect(row.capacityWaitSeconds).toBeCloseTo(first.waitedSeconds, 6); // added once, not per retry
    for (const e of [exp(0), exp(1)]) await releaseCapacity(deps(), { experimentId: e, attempt: 1 });
    expect(await heldSlots(db.db, { campaignId: id })).toBe(0);
  });

  test('a waiting acquire is granted when the holder releases, and a cancelled one leaves nothing held', async () => {
    const { id, exp } = await campaignWith(1, 3);
    await acquire(exp(0)).grant;
    const waiting = acquire(exp(1));
    const cancelled = acquire(exp(2));
    const heartbeats = new Promise((r) => cancelled.env.once('heartbeat', r));
    await heartbeats; // it is waiting, not granted
    cancelled.env.cancel();
    await expect(cancelled.grant).rejects.toBeInstanceOf(CancelledFailure);
    expect(await releaseCapacity(deps(), { experimentId: exp(0), attempt: 1 })).toEqual({ released: true });
    const granted = await waiting.grant;
    expect(granted.runId).toBe(`${exp(1)}/r1`);
    const held = await db.db.select().from(capacitySlots).where(eq(capacitySlots.campaignId, id));
    expect(held.map((s) => s.runId)).toEqual([`${exp(1)}/r1`]);
    expect(await releaseCapacity(deps(), { experimentId: exp(1), attempt: 1 })).toEqual({ released: true });
    expect(await releaseCapacity(deps(), { experimentId: exp(1), attempt: 1 })).toEqual({ released: false });
  });

  test('the cluster limit (capacity table) holds across campaigns, and a slot whose run ended is reaped', async () => {
    // On the slurm kind (nothing is submitted: slots are rows), so the other tests' local slots do not count.
    const a = await campaignWith(5, 1, 'slurm');
    const b = await campaignWith(5, 1, 'slurm');
    await db.db.insert(capacity).values({ backend: 'slurm', maxJobs: 1 });
    try {
      await acquire(a.exp(0)).grant;
      const waiting = acquire(b.exp(0));
      await new Promise((r) => waiting.env.once('heartbeat', r));
      // a's run ends without its release (a terminated workflow): the reaper frees the slot on b's next check.
      await db.db.insert(trainingRuns).values({
        id: `${a.exp(0)}/r1`,
        experimentId: a.exp(0),
        attempt: 1,
        backend: 'slurm',
        runDir: '/nonexistent',
        status: 'succeeded',
        endedAt: new Date(),
      });
      await waiting.grant;
      expect(await heldSlots(db.db, { backend: 'slurm', campaignId: a.id })).toBe(0);
      expect(await heldSlots(db.db, { campaignId: b.id })).toBe(1);
      await releaseCapacity(deps(), { experimentId: b.exp(0), attempt: 1 });
    } finally {
      await db.db.delete(capacity).where(eq(capacity.backend, 'slurm'));
    }
  });

  test('grants made at once never pass a limit: 12 tries together, two campaigns of limit 3 under a cluster limit of 5', async () => {
    // A backend kind of its own (slots are rows; nothing is launched), and a pool of its own: each try on a connection.
    const backend = 'concurrent-grants';
    const a = await campaignWith(3, 6);
    const b = await campaignWith(3, 6);
    await db.db.insert(capacity).values({ backend, maxJobs: 5 });
    const pool = openDb(harness.dbUrl, { max: 12 });
    try {
      const tries = [a, b].flatMap((c) =>
        [0, 1, 2, 3, 4, 5].map((i) =>
          tryAcquireSlot(pool.db, {
            runId: `${c.exp(i)}/r1`,
            experimentId: c.exp(i),
            campaignId: c.id,
            backend,
            campaignLimit: 3,
            waitedSeconds: 0,
          }),
        ),
      );
      const answers = await Promise.all(tries);
      // Serialised by the grant's lock, whatever their order: 3 + 2 (or 2 + 3) granted, the other 7 refused.
      expect(answers.filter((x) => x.granted)).toHaveLength(5);
      expect(await heldSlots(db.db, { backend })).toBe(5);
      expect(await heldSlots(db.db, { campaignId: a.id })).toBeLessThanOrEqual(3);
      expect(await heldSlots(db.db, { campaignId: b.id })).toBeLessThanOrEqual(3);
      for (const x of answers) if (!x.granted) expect(x.campaignHeld >= 3 || x.backendHeld >= 5).toBe(true);
    } finally {
      await pool.close();
      await db.db.delete(capacitySlots).where(eq(capacitySlots.backend, backend));
      await db.db.delete(capacity).where(eq(capacity.backend, backend));
    }
  });

  test('checkBudget refuses at the cap with a one-line message', async () => {
    const { id } = await campaignWith(1, 0);
    const spec = parseSpec({ name: id, searchSpace: { x: { type: 'float', low: 0, high: 1 } }, budget: { maxCostUsd: 0.5 } });
    await expect(checkBudget(db.db, id, spec)).resolves.toBe(0);
    await db.db.insert(costLedger).values({
      id: `${id}/call-1/tokens`,
      campaignId: id,
      kind: 'tokens',
      quantity: 1000,
      unitPriceUsd: 0.0005,
      amountUsd: 0.5,
      sourceId: 'call-1',
    });
    await expect(checkBudget(db.db, id, spec)).rejects.toMatchObject({
      name: 'BudgetExceededError',
      message: `campaign "${id}" has spent $0.5000 of its $0.5000 budget (budget.maxCostUsd)`,
    });
  });
});

test('SIGKILL of the training worker while an experiment waits for capacity: the acquire is retried, nothing leaks', async () => {
  const workers = await harness.workers('t-kill', ['orchestration', 'eval']);
  const env = cliEnv(harness, workers.prefix);
  const startWorker = (): ChildProcess =>
    spawn(process.execPath, [path.join(REPO, 'bin', 'flywheel.js'), 'worker', '--queue', 'training'], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  let worker = startWorker();
  const id = uniqueName('kill');
  const wf = `${id}/inner/1`;
  // The baseline (fixed params alone) is quick and runs first, alone (inner-baseline-first); e0 and e1 both train
  // for 6 s, in parallel, on one slot.
  const base = fixtureSpec(id, { offset: 0, sleepMs: 6000 }, { budget: { experiments: 2, parallelism: 2 }, batchSize: 2 });
  const spec = {
    ...base,
    searchSpace: { ...base.searchSpace, offset: { type: 'categorical', choices: [0, 1] } },
    trainer: { ...base.trainer, fixed: { steps: 20 } },
    backend: { kind: 'local', maxConcurrent: 1 },
    budget: { gpusPerJob: 1 },
  };
  const searched = (r: { experimentId: string }) => /\/e\d+$/.test(r.experimentId);
  try {
    const h = await workers.startLoop(id, spec);
    // One run launched and streaming, the other experiment waiting in acquireCapacity (it has heartbeated).
    await eventually('one run streaming, one acquire waiting', async () => {
      const runs = (await runsOfLoop(wf)).filter(searched);
      if (runs.length !== 1 || (await heldSlots(db.db, { campaignId: id })) !== 1) return undefined;
      const [points] = await db.db
        .select({ n: sql<number>`count(*)::int` })
        .from(metricPoints)
        .where(eq(metricPoints.runId, runs[0].id));
      return points.n > 0 ? true : undefined;
    });
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    worker = startWorker();
    const result: InnerLoopResult = await h.result();
    expect([`${wf}/e0`, `${wf}/e1`]).toContain(result.best?.experimentId);
    expect(result.baselineCheckpointId).toBeDefined();
  } finally {
    worker.kill('SIGKILL');
    await workers.stop();
  }
  const runs = await runsOfLoop(wf);
  expect(runs).toHaveLength(3);
  expect(runs.every((r) => r.launches === 1 && r.status === 'succeeded')).toBe(true);
  expectNoOverlap(runs);
  expect(await heldSlots(db.db, { campaignId: id })).toBe(0);
  // The experiment that waited: its one acquire was retried after the heartbeat timeout (attempt > 1).
  const second = runs.filter(searched).reduce((a, b) => (a.startedAt > b.startedAt ? a : b));
  const shape = await historyShape(second.experimentId);
  expect(shape.scheduled.filter((n) => n === 'runTraining')).toHaveLength(1);
  expect(shape.timers).toBe(0);
  expect(shape.attempts.runTraining).toBeGreaterThan(1);
  // The holder's runTraining was retried too (it reattached, not relaunched), and still one ledger row per run.
  const first = runs.find((r) => searched(r) && r !== second)!;
  expect((await historyShape(first.experimentId)).attempts.runTraining).toBeGreaterThan(1);
  const ledger = await db.db.select().from(costLedger).where(eq(costLedger.campaignId, id));
  expect(ledger.map((l) => l.id).sort()).toEqual(runs.map((r) => `${r.id}/gpu`).sort());
}, 240_000);

test('a cancelled loop releases the slot of its running experiment and of its waiting one', async () => {
  const workers = await harness.workers('t-cancel');
  const id = uniqueName('cancel');
  const wf = `${id}/inner/1`;
  const base = fixtureSpec(id, { offset: 0 });
  const spec = {
    ...base,
    trainer: { ...base.trainer, fixed: { steps: 600, sleepMs: 60_000 } },
    backend: { kind: 'local', maxConcurrent: 1 },
  };
  try {
    const h = await workers.startLoop(id, spec);
    const [run] = await eventually('one run holding the slot', async () => {
      const runs = await runsOfLoop(wf);
      return runs.length === 1 && (await heldSlots(db.db, { campaignId: id })) === 1 ? runs : undefined;
    });
    await h.cancel();
    await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    // The loop's result may come before its children have finished cancelling (killing the trainer, releasing).
    await eventually('the trainer to be stopped', async () => (groupMembers(Number(run.handle!.ref)).length === 0 ? true : undefined));
    await eventually('every slot released', async () => ((await heldSlots(db.db, { campaignId: id })) === 0 ? true : undefined));
    expect(await runsOfLoop(wf)).toHaveLength(1); // the waiting experiment never launched
  } finally {
    await workers.stop();
  }
}, 120_000);

test('a cost cap below the first run\'s cost refuses the next launch and stops the loop with stoppedBy "budget"', async () => {
  const workers = await harness.workers('t-budget');
  const id = uniqueName('budget');
  const wf = `${id}/inner/1`;
  // $1 per GPU-second: any run costs more than the cap.
  const spec = {
    ...fixtureSpec(id, { steps: 10, sleepMs: 500 }, { budget: { experiments: 4, parallelism: 1 }, batchSize: 1 }),
    backend: { kind: 'local', maxConcurrent: 1 },
    budget: { maxCostUsd: 0.0001, gpusPerJob: 1, gpuHourUsd: { default: 3600 } },
  };
  let result: InnerLoopResult;
  try {
    result = await (await workers.startLoop(id, spec)).result();
  } finally {
    await workers.stop();
  }
  expect(result.stoppedBy).toBe('budget');
  expect(result.experiments).toBeLessThan(4);
  expect(result.budgetExceeded).toMatch(
    new RegExp(`^campaign "${id}" has spent \\$\\d+\\.\\d{4} of its \\$0\\.0001 budget \\(budget\\.maxCostUsd\\)$`),
  );
  expect(formatResult(result, []).split('\n')[0]).toBe(
    `inner loop ${wf}: ${result.experiments} experiments, stopped by budget (${result.budgetExceeded})`,
  );
  const runs = await runsOfLoop(wf);
  const ledger = await db.db.select().from(costLedger).where(eq(costLedger.campaignId, id));
  expect(ledger).toHaveLength(runs.length);
  expect(runs).toHaveLength(1); // the first run spent past the cap; every later launch was refused
  const refused = (await expsOfLoop(wf)).filter((e) => e.error?.startsWith(`campaign "${id}" has spent`));
  expect(refused.length).toBeGreaterThanOrEqual(1);
  for (const e of refused) {
    expect(e.status).toBe('failed');
    expect(runs.some((r) => r.experimentId === e.id)).toBe(false);
  }
  expect(await heldSlots(db.db, { campaignId: id })).toBe(0);
  saveHistory('inner-loop-budget', wf);
}, 180_000);

test("a slot held by a terminated experiment (no release, no end recorded) is reaped by the waiters' liveness check", async () => {
  const saved = { ...capacityTiming };
  Object.assign(capacityTiming, { staleAfterSeconds: 1, livenessEveryMs: 0 });
  const workers = await harness.workers('t-reap');
  const id = uniqueName('reap');
  const wf = `${id}/inner/1`;
  // Two loops of one campaign: each fresh loop runs its untrained baseline first and alone (inner-baseline-first),
  // so the holder and the waiter are the two loops' baselines, competing for the campaign's one slot. A terminated
  // experiment of the same loop would fail that loop and cancel its waiter with it.
  const base = fixtureSpec(id, { offset: 0 });
  const spec = {
    ...base,
    trainer: { ...base.trainer, fixed: { steps: 20, sleepMs: 60_000 } },
    backend: { kind: 'local', maxConcurrent: 1 },
  };
  const wf2 = `${id}/inner/2`;
  const bothRuns = async () => [...(await runsOfLoop(wf)), ...(await runsOfLoop(wf2))];
  try {
    const h = await workers.startLoop(id, spec);
    const h2 = await harness.client.workflow.start('innerLoop', {
      taskQueue: `${workers.prefix}-orchestration`,
      workflowId: wf2,
      args: [{ campaignVersionId: await harness.version(spec) }],
    });
    const [holder] = await eventually('one run holding the slot', async () => {
      const runs = await bothRuns();
      return runs.length === 1 && (await heldSlots(db.db, { campaignId: id })) === 1 ? runs : undefined;
    });
    await harness.client.workflow.getHandle(holder.experimentId).terminate('test: a holder that never releases');
    // The trainer still runs and its run never ends in PostgreSQL: only the liveness check can free the slot.
    const second = await eventually('the waiting experiment to launch', async () =>
      (await bothRuns()).find((r) => r.experimentId !== holder.experimentId),
    );
    const [slot] = await db.db.select().from(capacitySlots).where(eq(capacitySlots.campaignId, id));
    expect(slot.runId).toBe(second.id);
    const [stale] = await db.db.select().from(trainingRuns).where(eq(trainingRuns.id, holder.id));
    expect(stale.endedAt).toBeNull();
    // The loop fails (a child was terminated) or is cancelled here; either way its live experiment is cancelled and releases.
    for (const loop of [h, h2]) {
      await loop.cancel().catch(() => undefined);
      await loop.result().catch(() => undefined);
    }
    await eventually('every slot released', async () => ((await heldSlots(db.db, { campaignId: id })) === 0 ? true : undefined));
    process.kill(-Number(holder.handle!.ref), 'SIGKILL');
  } finally {
    Object.assign(capacityTiming, saved);
    await workers.stop();
  }
}, 120_000);

test('a slot held by an inline experiment stays while its loop runs, and is reaped once the loop is terminated', async () => {
  const saved = { ...capacityTiming };
  Object.assign(capacityTiming, { staleAfterSeconds: 1, livenessEveryMs: 0 });
  const workers = await harness.workers('t-reap-inline');
  const id = uniqueName('reap-inline');
  // As above, the two loops' baselines compete for the campaign's one slot; here neither has an experiment workflow,
  // so the holder's liveness is its loop's (acquire-capacity.ts holderRunning).
  const base = fixtureSpec(id, { offset: 0 }, { experimentWorkflows: 'inline' });
  const spec = {
    ...base,
    trainer: { ...base.trainer, fixed: { steps: 20, sleepMs: 60_000 } },
    backend: { kind: 'local', maxConcurrent: 1 },
  };
  const [wf, wf2] = [`${id}/inner/1`, `${id}/inner/2`];
  const bothRuns = async () => [...(await runsOfLoop(wf)), ...(await runsOfLoop(wf2))];
  let holderPgid: number | undefined;
  try {
    const handles = [
      await workers.startLoop(id, spec),
      await harness.client.workflow.start('innerLoop', {
        taskQueue: `${workers.prefix}-orchestration`,
        workflowId: wf2,
        args: [{ campaignVersionId: await harness.version(spec) }],
      }),
    ];
    const [holder] = await eventually('one run holding the slot', async () => {
      const runs = await bothRuns();
      return runs.length === 1 && runs[0].handle && (await heldSlots(db.db, { campaignId: id })) === 1 ? runs : undefined;
    });
    holderPgid = Number(holder.handle!.ref);
    // The waiter checks the holder's liveness on every re-check (2 s apart): with the experiment's workflow absent, a
    // reaper that asked only for it freed the slot of a running trainer and launched the second run beside it.
    await new Promise((r) => setTimeout(r, 6_000));
    expect((await bothRuns()).map((r) => r.id)).toEqual([holder.id]);
    const holderLoop = holder.experimentId.startsWith(`${wf}/`) ? wf : wf2;
    await harness.client.workflow.getHandle(holderLoop).terminate('test: a holder whose loop is gone');
    const second = await eventually('the waiting experiment to launch', async () =>
      (await bothRuns()).find((r) => r.experimentId !== holder.experimentId),
    );
    expect(second.experimentId.startsWith(`${holderLoop}/`)).toBe(false);
    for (const h of handles) {
      await h.cancel().catch(() => undefined);
      await h.result().catch(() => undefined);
    }
    await eventually('every slot released', async () => ((await heldSlots(db.db, { campaignId: id })) === 0 ? true : undefined));
  } finally {
    if (holderPgid) {
      try {
        process.kill(-holderPgid, 'SIGKILL');
      } catch {
        // already gone: its activity saw the termination and stopped it
      }
    }
    Object.assign(capacityTiming, saved);
    await workers.stop();
  }
}, 120_000);
