// The Slurm backend against a real one-node Slurm (started by .ci/start-slurm.sh): the shared conformance suite
// (launch idempotence, success, failure, cancel, reattach, requeue resumed from the checkpoint, a campaign, a time
// limit recorded as timed_out), plus what only Slurm has: a worker that died between sbatch and recording the job id.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { JobHandle, JobStatus } from '../../backends';
import { SlurmBackend, jobNameOf, type SlurmBackendOptions } from '../../backends/slurm/slurm-backend';
import { controllerUp, jobsNamed, showJob } from '../../backends/slurm/slurm-commands';
import { eventually } from '../helpers/loop-harness';
import { requires } from '../helpers/requires';
import { launchDirOf } from '../../backends/run-dir-files';
import { backendConformance, fixtureRun, jobEnded, launchLines, steps } from './conformance';

requires('slurm');

const submitted: string[] = [];

beforeAll(async () => {
  const ping = await controllerUp({ timeoutMs: 10_000 });
  if (!ping.up)
    throw new Error(`Slurm is not running here (scontrol ping: ${ping.message}); start it with "bash .ci/start-slurm.sh" (as root)`);
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
  return jobEnded(b, h, timeoutMs);
}

/** Jobs in the queue (pending, running, completing) under this name: squeue's default states. */
const queued = (name: string) => execFileSync('squeue', ['--noheader', `--name=${name}`, '--format=%i'], { encoding: 'utf8' }).trim();

test('a new backend instance (a restarted worker) reattaches to the running job without a second submission', async () => {
  const req = fixtureRun('slurm', 'reattach', { steps: 20, sleepMs: 6_000 });
  const h = await launch(backend(), req);
  // A new worker with the run dir's record.
  expect((await launch(backend(), req)).ref).toBe(h.ref);
  // A worker that died between sbatch and recording the job id: its lock is left, the id file is not there.
  const records = launchDirOf(req.runDir);
  fs.rmSync(path.join(records, 'slurm_job_id'));
  expect(fs.existsSync(path.join(records, 'launch.lock'))).toBe(true);
  const fresh = backend({ lockWaitMs: 300 });
  const again = await launch(fresh, req);
  expect(again.ref).toBe(h.ref);
  expect(fs.readFileSync(path.join(records, 'slurm_job_id'), 'utf8').trim()).toBe(h.ref);
  expect((await fresh.status(again)).state).toBe('running');
  expect(await finished(fresh, again)).toMatchObject({ state: 'succeeded' });
  expect((await jobsNamed(jobNameOf(req.runId))).map((j) => j.jobId)).toEqual([h.ref]);
  expect(launchLines(req.runDir)).toHaveLength(1);
  expect(steps(req.runDir)).toHaveLength(20);
});

backendConformance({
  kind: 'slurm',
  make: () => backend(),
  track: (h) => void (submitted.includes(h.ref) || submitted.push(h.ref)),
  backendSpec: { kind: 'slurm' },
  timeLimited: (spec) => ({ ...spec, backend: { kind: 'slurm', slurm: { timeLimitMinutes: 1 } } }),
  async preempt(_b, h) {
    execFileSync('scontrol', ['requeue', h.ref]);
    // Slurm holds a requeued job until its old credential expires (AuthInfo=cred_expire in .ci/start-slurm.sh).
    await eventually(
      'the requeued job to be pending',
      async () => ((await showJob(h.ref))?.state === 'PENDING' ? true : undefined),
      60_000,
    );
  },
  async afterCancel(h, req) {
    expect(queued(jobNameOf(req.runId))).toBe('');
    expect((await showJob(h.ref))?.state).toBe('CANCELLED');
  },
});
