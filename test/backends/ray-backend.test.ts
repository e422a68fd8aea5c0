// The Ray backend against a real local Ray head and its Jobs HTTP API (started by .ci/start-ray.sh): one job per run
// id however often or concurrently it is launched, each way a job can end, cancel, a new worker that reattaches by
// submission id, a driver that dies mid-run and is resumed from the trainer's checkpoint, and one inner loop on it.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { JobHandle, JobStatus } from '../../backends';
import { RayBackend, attemptIdOf, entrypointOf, submissionIdOf, type RayBackendOptions } from '../../backends/ray/ray-backend';
import { RayJobsClient, RayJobsError } from '../../backends/ray/ray-jobs-client';
import { trainingRuns } from '../../db/schema';
import { scratchDir } from '../helpers/env';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

const FIXTURE_TRAINER = path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js');
const client = new RayJobsClient();
const submitted: string[] = [];

beforeAll(async () => {
  try {
    await client.version();
  } catch (e) {
    throw new Error(`no Ray head answers here (${(e as Error).message}); start one with "bash .ci/start-ray.sh"`);
  }
});

afterAll(async () => {
  // A failed test may leave its job running: the head has two CPUs and other tests need them.
  for (const id of submitted) {
    const job = await client.get(id).catch(() => undefined);
    if (job && (job.status === 'PENDING' || job.status === 'RUNNING')) await client.stop(id).catch(() => undefined);
  }
});

/** A run directory (with a space and a single quote in its path) holding a run.json for the fixture trainer. */
function fixtureRun(label: string, params: Record<string, number | boolean>) {
  const runId = `${uniqueName(label)}/e0/r1`;
  const runDir = path.join(scratchDir('ray'), "run dirs o'clock $HOME", runId.replace(/\//g, '_'));
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify({ runId, params, checkpointEvery: 0 }));
  return { runId, runDir, argv: [process.execPath, FIXTURE_TRAINER, 'train', '--run-dir', runDir] };
}

function backend(opts: RayBackendOptions = {}): RayBackend {
  return new RayBackend({ statusIntervalMs: 200, ...opts });
}

async function launch(b: RayBackend, req: ReturnType<typeof fixtureRun>): Promise<JobHandle> {
  const h = await b.launch(req);
  if (!submitted.includes(h.ref)) submitted.push(h.ref);
  return h;
}

function finished(b: RayBackend, h: JobHandle, timeoutMs = 90_000): Promise<JobStatus> {
  return eventually(`job ${h.ref} to finish`, async () => {
    const s = await b.status(h);
    return s.state === 'running' ? undefined : s;
  }, timeoutMs);
}

const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);
const steps = (runDir: string) => lines(path.join(runDir, 'metrics.jsonl')).map((l) => (JSON.parse(l) as { step: number }).step);
/** The submission ids that started a launcher in this run dir, in order. */
const launches = (runDir: string) => lines(path.join(runDir, 'launches.log')).map((l) => l.split(' ')[0]);
/** Live processes whose command line names this run directory (the launcher and the trainer). */
function processesOf(runDir: string): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(runDir)) out.push(Number(pid));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

test('the entrypoint is constant but for the quoted run dir, and the argv never enters it', () => {
  const req = fixtureRun('quote', { steps: 1 });
  const e = entrypointOf(req.runDir);
  expect(e).toBe(`exec python3 '${req.runDir.replace(/'/g, `'\\''`)}/ray-launcher.py' '${req.runDir.replace(/'/g, `'\\''`)}'`);
  expect(e).not.toContain(FIXTURE_TRAINER);
  expect(submissionIdOf(req.runId)).toBe(submissionIdOf(req.runId));
  expect(submissionIdOf(req.runId)).toMatch(/^fw-[0-9a-f]{12}-[A-Za-z0-9._-]+$/);
  expect(attemptIdOf('fw-x', 1)).toBe('fw-x');
  expect(attemptIdOf('fw-x', 2)).toBe('fw-x-r2');
});

test('launching twice, and twice at once from two backends, submits one job', async () => {
  const once = fixtureRun('twice', { steps: 5 });
  const b = backend();
  const h1 = await launch(b, once);
  const h2 = await launch(b, once);
  expect(h2.ref).toBe(h1.ref);
  expect(h1.ref).toBe(submissionIdOf(once.runId));

  const racing = fixtureRun('race', { steps: 5 });
  const [r1, r2] = await Promise.all([launch(backend(), racing), launch(backend(), racing)]);
  expect(r2.ref).toBe(r1.ref);

  for (const [req, h] of [[once, h1], [racing, r1]] as const) {
    expect((await finished(b, h)).state).toBe('succeeded');
    // One launcher ran, under the run's own submission id, and the head holds no resubmission of it.
    expect(launches(req.runDir)).toEqual([h.ref]);
    expect(await client.get(attemptIdOf(h.ref, 2))).toBeUndefined();
  }
});

test('a completed job is succeeded, with its metrics and checkpoint in the run dir (a path with a space and a quote)', async () => {
  const req = fixtureRun('ok', { steps: 10 });
  const b = backend();
  const h = await launch(b, req);
  expect(h).toMatchObject({ backend: 'ray', runId: req.runId, runDir: req.runDir });
  const s = await finished(b, h);
  expect(s).toMatchObject({ state: 'succeeded', exitCode: 0 });
  expect(s.reason).toBeUndefined();
  expect(s.trainerSeconds).toBeGreaterThan(0);
  expect(steps(req.runDir)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const manifest = JSON.parse(fs.readFileSync(path.join(req.runDir, 'checkpoints', 'manifest.json'), 'utf8'));
  expect(manifest.checkpoints.map((c: { step: number }) => c.step)).toEqual([10]);
  const job = await client.get(h.ref);
  expect(job).toMatchObject({ status: 'SUCCEEDED', entrypoint: entrypointOf(req.runDir) });
  expect(job?.metadata).toMatchObject({ flywheel_run_id: req.runId, flywheel_run_dir: req.runDir });
});

test('a failing trainer is failed with its exit code and stderr tail, and is not resubmitted', async () => {
  const req = fixtureRun('crash', { crash: true });
  const b = backend();
  const h = await launch(b, req);
  const s = await finished(b, h);
  expect(s).toMatchObject({ state: 'failed', exitCode: 3 });
  expect(s.reason).toBeUndefined();
  expect(await b.stderrTail(h, 5)).toContain('exploding on purpose');
  expect(fs.readFileSync(path.join(req.runDir, 'exit_code'), 'utf8').trim()).toBe('3');
  expect((await client.get(h.ref))?.status).toBe('FAILED');
  expect(await b.status(h)).toMatchObject({ state: 'failed', exitCode: 3 });
  expect(await client.get(attemptIdOf(h.ref, 2))).toBeUndefined();
});

test('cancel leaves the job STOPPED and no launcher or trainer process', async () => {
  const req = fixtureRun('cancel', { steps: 600, sleepMs: 600_000 });
  const b = backend();
  const h = await launch(b, req);
  await eventually('the trainer to start', async () => (steps(req.runDir).length > 0 ? true : undefined), 60_000);
  expect(processesOf(req.runDir).length).toBeGreaterThan(0);
  await b.cancel(h);
  expect((await client.get(h.ref))?.status).toBe('STOPPED');
  expect(processesOf(req.runDir)).toEqual([]);
  expect(await b.status(h)).toMatchObject({ state: 'failed', reason: 'cancelled', exitCode: 143 });
  await b.cancel(h); // a second cancel of a finished job is a no-op
});

test('a new backend instance (a restarted worker) reattaches by submission id without a second submission', async () => {
  const req = fixtureRun('reattach', { steps: 20, sleepMs: 6_000 });
  const h = await launch(backend(), req);
  // A new worker with the run dir's record.
  expect((await launch(backend(), req)).ref).toBe(h.ref);
  // A worker that died between submitting and recording the id: the head still knows the job by its id.
  fs.rmSync(path.join(req.runDir, 'ray_submission_id'));
  const fresh = backend();
  const again = await launch(fresh, req);
  expect(again.ref).toBe(h.ref);
  expect(fs.readFileSync(path.join(req.runDir, 'ray_submission_id'), 'utf8').trim()).toBe(h.ref);
  expect((await fresh.status(again)).state).toBe('running');
  expect(await finished(fresh, again)).toMatchObject({ state: 'succeeded' });
  expect(launches(req.runDir)).toEqual([h.ref]);
  expect(steps(req.runDir)).toHaveLength(20);
});

test('a job whose driver dies mid-run is resubmitted in its run dir and the trainer resumes from its checkpoint', async () => {
  const req = fixtureRun('driver-dies', { steps: 60, sleepMs: 15_000, checkpointEvery: 10 });
  const b = backend();
  const h = await launch(b, req);
  // Past the step-10 checkpoint, so the resumed run must skip steps 1-10 and redo the few after it.
  await eventually('a checkpoint and a few steps after it', async () => (steps(req.runDir).length >= 13 ? true : undefined), 60_000);
  const launcher = Number(fs.readFileSync(path.join(req.runDir, 'ray-launcher.pid'), 'utf8'));
  process.kill(launcher, 'SIGKILL'); // the job's driver, not the trainer: no exit record is written
  await eventually('Ray to see the driver fail', async () => ((await client.get(h.ref))?.status === 'FAILED' ? true : undefined), 30_000);
  expect(fs.existsSync(path.join(req.runDir, 'exit_code'))).toBe(false);
  expect(await b.status(h)).toMatchObject({ state: 'running', reason: 'preempted' });

  const s = await finished(b, h, 120_000);
  expect(s).toMatchObject({ state: 'succeeded', exitCode: 0 });
  expect((await client.get(h.ref))?.status).toBe('FAILED');
  expect((await client.get(attemptIdOf(h.ref, 2)))?.status).toBe('SUCCEEDED');
  expect(await client.get(attemptIdOf(h.ref, 3))).toBeUndefined();
  expect(launches(req.runDir)).toEqual([h.ref, attemptIdOf(h.ref, 2)]);

  const resumedFrom = Number(/resuming from step (\d+)/.exec(fs.readFileSync(path.join(req.runDir, 'stderr.log'), 'utf8'))?.[1]);
  expect(resumedFrom).toBeGreaterThanOrEqual(10);
  expect(resumedFrom % 10).toBe(0);
  // metrics.jsonl: the first run's steps 1..k (k >= the checkpoint), then the resumed run's checkpoint+1..60.
  const seen = steps(req.runDir);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const restartAt = seen.lastIndexOf(resumedFrom + 1);
  expect(seen.slice(restartAt)).toEqual(range(resumedFrom + 1, 60));
  expect(seen.slice(0, restartAt)).toEqual(range(1, restartAt));
  expect(restartAt).toBeGreaterThanOrEqual(resumedFrom);
}, 180_000);

test('a head that does not answer fails with a message naming .ci/start-ray.sh', async () => {
  const req = fixtureRun('nohead', { steps: 1 });
  // A port nothing listens on (the GCS port is not HTTP either way; 1 is reserved and closed).
  const b = backend({ address: 'http://127.0.0.1:1' });
  const err = await b.launch(req).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RayJobsError);
  expect((err as Error).message).toMatch(/no Ray Jobs API answers at http:\/\/127\.0\.0\.1:1 .*\.ci\/start-ray\.sh/);
});

describe('an inner loop on the Ray backend', () => {
  let harness: LoopHarness;
  beforeAll(async () => {
    harness = await loopHarness('ray-loop');
  });
  afterAll(() => harness?.close());

  test('an experiment trains as a Ray job and its checkpoint is scored', async () => {
    const workers = await harness.workers('t-ray');
    try {
      const id = uniqueName('ray');
      const wf = `${id}/inner/1`;
      const h = await workers.startLoop(id, { ...fixtureSpec(id, { steps: 10 }), backend: { kind: 'ray', ray: { numCpus: 1 } } });
      const result = await h.result();
      expect(result.best?.experimentId).toBe(`${wf}/e0`);
      const [run] = await harness.db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, `${wf}/e0`));
      const ref = (run.handle as JobHandle).ref;
      submitted.push(ref);
      expect(run).toMatchObject({ backend: 'ray', status: 'succeeded', exitCode: 0, launches: 1 });
      expect((await client.get(ref))?.status).toBe('SUCCEEDED');
    } finally {
      await workers.stop();
    }
  }, 180_000);
});
