// Training under faults: a trainer that crashes, a campaign cancelled mid-run, and the training worker
// killed with SIGKILL mid-experiment (it must reattach: one trainer process, no duplicated metric points).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { eq, like, sql } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { experiments, metricPoints, trainingRuns } from '../../db/schema';
import { groupMembers } from '../../backends/local/process-liveness';
import { launchDirOf } from '../../backends/run-dir-files';
import { cliEnv } from '../helpers/cli';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

const REPO = path.join(__dirname, '..', '..');
let harness: LoopHarness;
let db: DbHandle;

beforeAll(async () => {
  harness = await loopHarness('faults');
  ({ db } = harness);
});
afterAll(() => harness?.close());

const runsOf = (experimentId: string) => db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, experimentId));

/** The first run of `experimentId`, once its trainer has streamed at least one metric point. */
async function streamingRun(experimentId: string) {
  const run = await eventually('the trainer to start', async () => (await runsOf(experimentId))[0]);
  await eventually('streamed metric points', async () =>
    (await db.db.select().from(metricPoints).where(eq(metricPoints.runId, run.id))).length > 0 ? true : undefined,
  );
  return run;
}

test('a trainer that crashes is a failed run with its stderr, relaunched per the spec', async () => {
  const workers = await harness.workers('t-crash');
  try {
    const id = uniqueName('crash');
    const wf = `${id}/inner/1`;
    const h = await workers.startLoop(id, fixtureSpec(id, { crash: true }, { maxTrainingAttempts: 2 }));
    const result = await h.result();
    expect(result.best).toBeUndefined();
    const [exp] = await db.db
      .select()
      .from(experiments)
      .where(eq(experiments.id, `${wf}/e0`));
    expect(exp.status).toBe('failed');
    expect(exp.error).toMatch(/exited with code 3/);
    const runs = await runsOf(`${wf}/e0`);
    expect(runs.map((r) => r.attempt).sort()).toEqual([1, 2]);
    for (const r of runs) {
      expect(r.status).toBe('failed');
      expect(r.exitCode).toBe(3);
      expect(r.stderrTail).toContain('exploding on purpose');
    }
  } finally {
    await workers.stop();
  }
});

test('a cancelled campaign leaves no trainer process running', async () => {
  const workers = await harness.workers('t-cancel');
  try {
    const id = uniqueName('cancel');
    const wf = `${id}/inner/1`;
    const h = await workers.startLoop(id, fixtureSpec(id, { steps: 600, sleepMs: 60_000 }));
    const run = await streamingRun(`${wf}/e0`);
    const pid = Number(run.handle!.ref);
    expect(groupMembers(pid).length).toBeGreaterThan(0);
    await h.cancel();
    await expect(h.result()).rejects.toBeInstanceOf(WorkflowFailedError);
    expect(groupMembers(pid)).toEqual([]);
    const [after] = await runsOf(`${wf}/e0`);
    expect(after.status).toBe('cancelled');
  } finally {
    await workers.stop();
  }
});

test('SIGKILL of the training worker mid-experiment: it reattaches, one trainer launched, no duplicate points', async () => {
  // Orchestration and eval run here; training runs in a worker process we can kill.
  const workers = await harness.workers('t-kill', ['orchestration', 'eval']);
  const env = cliEnv(harness, workers.prefix);
  const startWorker = (): ChildProcess =>
    spawn(process.execPath, [path.join(REPO, 'bin', 'flywheel.js'), 'worker', '--queue', 'training'], {
      env,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  let worker = startWorker();
  try {
    const id = uniqueName('kill');
    const wf = `${id}/inner/1`;
    const h = await workers.startLoop(id, fixtureSpec(id, { steps: 80, sleepMs: 8_000 }));
    await streamingRun(`${wf}/e0`);
    worker.kill('SIGKILL');
    await new Promise((r) => worker.once('exit', r));
    worker = startWorker();
    const result = await h.result();
    expect(result.best?.experimentId).toBe(`${wf}/e0`);

    const runs = await runsOf(`${wf}/e0`);
    expect(runs).toHaveLength(1);
    const launches = fs
      .readFileSync(path.join(launchDirOf(runs[0].runDir), 'launches.log'), 'utf8')
      .trim()
      .split('\n');
    expect(launches).toHaveLength(1);
    const lines = fs.readFileSync(path.join(runs[0].runDir, 'metrics.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(80);
    const [{ n, distinct }] = await db.db
      .select({ n: sql<number>`count(*)::int`, distinct: sql<number>`count(distinct step)::int` })
      .from(metricPoints)
      .where(eq(metricPoints.runId, runs[0].id));
    expect(n).toBe(80);
    expect(distinct).toBe(80);
    const all = await db.db
      .select()
      .from(trainingRuns)
      .where(like(trainingRuns.experimentId, `${wf}/%`));
    expect(all.every((r) => r.launches === 1)).toBe(true);
  } finally {
    worker.kill('SIGKILL');
    await workers.stop();
  }
});
