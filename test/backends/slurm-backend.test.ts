// The Slurm backend against a real one-node Slurm (started by .ci/start-slurm.sh): one job per run id however often
// or concurrently it is launched, each way a job can end, a requeue that resumes from the trainer's checkpoint, a
// time limit recorded as timed_out, cancel, and a new worker that reattaches by job name. Then one inner loop on it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { JobHandle, JobStatus } from '../../backends';
import { SlurmBackend, jobNameOf, type SlurmBackendOptions } from '../../backends/slurm/slurm-backend';
import { controllerUp, jobsNamed, showJob } from '../../backends/slurm/slurm-commands';
import { experiments, trainingRuns } from '../../db/schema';
import { scratchDir } from '../helpers/env';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';

const FIXTURE_TRAINER = path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js');
const submitted: string[] = [];

beforeAll(async () => {
  const ping = await controllerUp({ timeoutMs: 10_000 });
  if (!ping.up) throw new Error(`Slurm is not running here (scontrol ping: ${ping.message}); start it with "bash .ci/start-slurm.sh" (as root)`);
});

afterAll(() => {
  // A failed test may leave its job running: the node has two CPUs and other tests need them.
  for (const id of submitted) {
    try {
      execFileSync('scancel', [id], { stdio: 'ignore' });
    } catch {
      /* already finished and purged */
    }
  }
});

/** A run directory with a run.json for the fixture trainer, and the launch request for it. */
function fixtureRun(label: string, params: Record<string, number | boolean>) {
  const runId = `${uniqueName(label)}/e0/r1`;
  // A space and a '%' in the path: argv stays data, and '%' must not become one of sbatch's file-name patterns.
  const runDir = path.join(scratchDir('slurm'), 'run dirs 100%j', runId.replace(/\//g, '_'));
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify({ runId, params, checkpointEvery: 0 }));
  return { runId, runDir, argv: [process.execPath, FIXTURE_TRAINER, 'train', '--run-dir', runDir] };
}

function backend(opts: SlurmBackendOptions = {}): SlurmBackend {
  return new SlurmBackend({ statusIntervalMs: 200, ...opts });
}

async function launch(b: SlurmBackend, req: ReturnType<typeof fixtureRun>): Promise<JobHandle> {
  const h = await b.launch(req);
  if (!submitted.includes(h.ref)) submitted.push(h.ref);
  return h;
}

/** Polls status until the job is no longer running. */
function finished(b: SlurmBackend, h: JobHandle, timeoutMs = 60_000): Promise<JobStatus> {
  return eventually(`job ${h.ref} to finish`, async () => {
    const s = await b.status(h);
    return s.state === 'running' ? undefined : s;
  }, timeoutMs);
}

const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);
const steps = (runDir: string) => lines(path.join(runDir, 'metrics.jsonl')).map((l) => (JSON.parse(l) as { step: number }).step);
/** Jobs in the queue (pending, running, completing) under this name: squeue's default states. */
const queued = (name: string) => execFileSync('squeue', ['--noheader', `--name=${name}`, '--format=%i'], { encoding: 'utf8' }).trim();
/** Live processes whose command line names this run directory (the batch script and the trainer). */
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

test('launching twice, and twice at once from two backends, submits one job', async () => {
  const once = fixtureRun('twice', { steps: 5 });
  const b = backend();
  const h1 = await launch(b, once);
  const h2 = await launch(b, once);
  expect(h2.ref).toBe(h1.ref);

  const racing = fixtureRun('race', { steps: 5 });
  const [r1, r2] = await Promise.all([launch(backend(), racing), launch(backend(), racing)]);
  expect(r2.ref).toBe(r1.ref);

  for (const [req, h] of [[once, h1], [racing, r1]] as const) {
    expect((await finished(b, h)).state).toBe('succeeded');
    expect((await jobsNamed(jobNameOf(req.runId))).map((j) => j.jobId)).toEqual([h.ref]);
    expect(lines(path.join(req.runDir, 'launches.log'))).toHaveLength(1);
  }
});

test('a completed job is succeeded, with its metrics and checkpoint in the run dir', async () => {
  const req = fixtureRun('ok', { steps: 10 });
  const b = backend();
  const h = await launch(b, req);
  expect(h).toMatchObject({ backend: 'slurm', runId: req.runId, runDir: req.runDir });
  const s = await finished(b, h);
  expect(s).toMatchObject({ state: 'succeeded', exitCode: 0 });
  expect(s.reason).toBeUndefined();
  expect(s.trainerSeconds).toBeGreaterThan(0);
  expect(steps(req.runDir)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const manifest = JSON.parse(fs.readFileSync(path.join(req.runDir, 'checkpoints', 'manifest.json'), 'utf8'));
  expect(manifest.checkpoints.map((c: { step: number }) => c.step)).toEqual([10]);
  expect((await showJob(h.ref))?.state).toBe('COMPLETED');
});

test('a failing trainer is failed with its exit code and stderr tail', async () => {
  const req = fixtureRun('crash', { crash: true });
  const b = backend();
  const h = await launch(b, req);
  const s = await finished(b, h);
  expect(s).toMatchObject({ state: 'failed', exitCode: 3 });
  expect(s.reason).toBeUndefined();
  expect(await b.stderrTail(h, 5)).toContain('exploding on purpose');
  expect(fs.readFileSync(path.join(req.runDir, 'exit_code'), 'utf8').trim()).toBe('3');
  expect((await showJob(h.ref))?.state).toBe('FAILED');
});

test('scontrol requeue of a running job resumes it from its checkpoint (the step count continues) and it succeeds', async () => {
  const req = fixtureRun('requeue', { steps: 60, sleepMs: 15_000, checkpointEvery: 10 });
  const b = backend();
  const h = await launch(b, req);
  // Past the step-10 checkpoint, so the requeued run must skip steps 1-10 and redo the few after it.
  await eventually('a checkpoint and a few steps after it', async () => (steps(req.runDir).length >= 13 ? true : undefined), 60_000);
  execFileSync('scontrol', ['requeue', h.ref]);
  // Slurm holds a requeued job until its old credential expires (AuthInfo=cred_expire in .ci/start-slurm.sh).
  await eventually('the requeued job to be pending', async () => ((await showJob(h.ref))?.state === 'PENDING' ? true : undefined), 60_000);
  expect((await b.status(h)).state).toBe('running');

  const s = await finished(b, h, 150_000);
  expect(s).toMatchObject({ state: 'succeeded', exitCode: 0 });
  const job = await showJob(h.ref);
  expect(job).toMatchObject({ state: 'COMPLETED', restarts: 1 });
  expect((await jobsNamed(jobNameOf(req.runId))).map((j) => j.jobId)).toEqual([h.ref]);
  // Two starts of the one job: the original and the requeued one.
  expect(lines(path.join(req.runDir, 'launches.log')).map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([`${h.ref} 0`, `${h.ref} 1`]);

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

test('cancel leaves no job in the queue and no trainer process', async () => {
  const req = fixtureRun('cancel', { steps: 600, sleepMs: 600_000 });
  const b = backend();
  const h = await launch(b, req);
  await eventually('the trainer to start', async () => (steps(req.runDir).length > 0 ? true : undefined), 60_000);
  expect(processesOf(req.runDir).length).toBeGreaterThan(0);
  await b.cancel(h);
  expect(queued(jobNameOf(req.runId))).toBe('');
  expect(processesOf(req.runDir)).toEqual([]);
  expect(await b.status(h)).toMatchObject({ state: 'failed', reason: 'cancelled' });
  await b.cancel(h); // a second cancel of a finished job is a no-op
});

test('a new backend instance (a restarted worker) reattaches to the running job without a second submission', async () => {
  const req = fixtureRun('reattach', { steps: 20, sleepMs: 6_000 });
  const h = await launch(backend(), req);
  // A new worker with the run dir's record.
  expect((await launch(backend(), req)).ref).toBe(h.ref);
  // A worker that died between sbatch and recording the job id: its lock is left, the id file is not there.
  fs.rmSync(path.join(req.runDir, 'slurm_job_id'));
  expect(fs.existsSync(path.join(req.runDir, 'launch.lock'))).toBe(true);
  const fresh = backend({ lockWaitMs: 300 });
  const again = await launch(fresh, req);
  expect(again.ref).toBe(h.ref);
  expect(fs.readFileSync(path.join(req.runDir, 'slurm_job_id'), 'utf8').trim()).toBe(h.ref);
  expect((await fresh.status(again)).state).toBe('running');
  expect(await finished(fresh, again)).toMatchObject({ state: 'succeeded' });
  expect((await jobsNamed(jobNameOf(req.runId))).map((j) => j.jobId)).toEqual([h.ref]);
  expect(lines(path.join(req.runDir, 'launches.log'))).toHaveLength(1);
  expect(steps(req.runDir)).toHaveLength(20);
});

describe('an inner loop on the Slurm backend', () => {
  let harness: LoopHarness;
  beforeAll(async () => {
    harness = await loopHarness('slurm-loop');
  });
  afterAll(() => harness?.close());

  const runOf = async (experimentId: string) => (await harness.db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, experimentId)))[0];

  test('an experiment trains as a Slurm job and its checkpoint is scored', async () => {
    const workers = await harness.workers('t-slurm');
    try {
      const id = uniqueName('slurm');
      const wf = `${id}/inner/1`;
      const h = await workers.startLoop(id, { ...fixtureSpec(id, { steps: 10 }), backend: { kind: 'slurm' } });
      const result = await h.result();
      expect(result.best?.experimentId).toBe(`${wf}/e0`);
      const run = await runOf(`${wf}/e0`);
      submitted.push((run.handle as JobHandle).ref);
      expect(run).toMatchObject({ backend: 'slurm', status: 'succeeded', exitCode: 0, launches: 1 });
      expect((await showJob((run.handle as JobHandle).ref))?.state).toBe('COMPLETED');
    } finally {
      await workers.stop();
    }
  });

  test('a job past its Slurm time limit is recorded as timed_out', async () => {
    const workers = await harness.workers('t-slurm-limit');
    try {
      const id = uniqueName('slurm-limit');
      const wf = `${id}/inner/1`;
      const spec = { ...fixtureSpec(id, { steps: 600, sleepMs: 600_000 }, { maxTrainingAttempts: 2 }), backend: { kind: 'slurm', slurm: { timeLimitMinutes: 1 } } };
      const h = await workers.startLoop(id, spec);
      const run = await eventually('the job to be submitted', () => runOf(`${wf}/e0`));
      submitted.push((run.handle as JobHandle).ref);
      const result = await h.result();
      expect(result.best).toBeUndefined();
      const after = await runOf(`${wf}/e0`);
      expect(after.status).toBe('timed_out');
      expect((await showJob((run.handle as JobHandle).ref))?.state).toBe('TIMEOUT');
      const [exp] = await harness.db.db.select().from(experiments).where(eq(experiments.id, `${wf}/e0`));
      expect(exp.status).toBe('timed_out');
      expect(exp.error).toMatch(/slurm time limit/);
      // A timed-out run is a verdict on the configuration: no second attempt was launched.
      expect(await harness.db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, `${wf}/e0`))).toHaveLength(1);
    } finally {
      await workers.stop();
    }
  }, 240_000);
});
