// The Ray backend against a real local Ray head and its Jobs HTTP API (started by .ci/start-ray.sh): the shared
// conformance suite (one job per run id, each way a job can end, cancel, reattach by submission id, a driver that dies
// mid-run resumed from the trainer's checkpoint, a campaign, a time limit), plus the constant quoted entrypoint and
// the message when no head answers.
import fs from 'node:fs';
import path from 'node:path';
import { RayBackend, attemptIdOf, entrypointOf, submissionIdOf, type RayBackendOptions } from '../../backends/ray/ray-backend';
import { RayJobsClient, RayJobsError } from '../../backends/ray/ray-jobs-client';
import { scratchDir } from '../helpers/env';
import { eventually } from '../helpers/loop-harness';
import { requires } from '../helpers/requires';
import { uniqueName } from '../helpers/specs';
import { launchDirOf } from '../../backends/run-dir-files';
import { backendConformance, launchLines } from './conformance';

requires('ray');

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

/** The submission ids that started a launcher in this run dir, in order. */
const launches = (runDir: string) => launchLines(runDir).map((l) => l.split(' ')[0]);

test('the entrypoint is constant but for the quoted run and launch dirs, and the argv never enters it', () => {
  const req = fixtureRun('quote', { steps: 1 });
  const e = entrypointOf(req.runDir);
  const q = (s: string) => s.replace(/'/g, `'\\''`);
  expect(e).toBe(`exec python3 '${q(launchDirOf(req.runDir))}/ray-launcher.py' '${q(req.runDir)}' '${q(launchDirOf(req.runDir))}'`);
  expect(e).not.toContain(FIXTURE_TRAINER);
  expect(submissionIdOf(req.runId)).toBe(submissionIdOf(req.runId));
  expect(submissionIdOf(req.runId)).toMatch(/^fw-[0-9a-f]{12}-[A-Za-z0-9._-]+$/);
  expect(attemptIdOf('fw-x', 1)).toBe('fw-x');
  expect(attemptIdOf('fw-x', 2)).toBe('fw-x-r2');
});

test('a head that does not answer fails with a message naming .ci/start-ray.sh', async () => {
  const req = fixtureRun('nohead', { steps: 1 });
  // A port nothing listens on (the GCS port is not HTTP either way; 1 is reserved and closed).
  const b = backend({ address: 'http://127.0.0.1:1' });
  const err = await b.launch(req).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RayJobsError);
  expect((err as Error).message).toMatch(/no Ray Jobs API answers at http:\/\/127\.0\.0\.1:1 .*\.ci\/start-ray\.sh/);
});

backendConformance({
  kind: 'ray',
  make: () => backend(),
  track: (h) => void (submitted.includes(h.ref) || submitted.push(h.ref)),
  backendSpec: { kind: 'ray' },
  // Ray jobs have no time limit of their own: awaitTraining enforces the spec's trainingTimeoutSeconds and stops the job.
  // (10 s: a Ray job takes a second or two to start, and the baseline must fit in the limit too.)
  timeLimited: (spec) => ({ ...spec, innerLoop: { ...spec.innerLoop, trainingTimeoutSeconds: 10 } }),
  // The job's driver dies (not the trainer's checked exit): no exit record, so the backend resubmits as `-r2`.
  async preempt(_b, h) {
    process.kill(Number(fs.readFileSync(path.join(launchDirOf(h.runDir), 'ray-launcher.pid'), 'utf8')), 'SIGKILL');
    await eventually('Ray to see the driver fail', async () => ((await client.get(h.ref))?.status === 'FAILED' ? true : undefined), 30_000);
  },
  async afterPreemption(h) {
    expect((await client.get(attemptIdOf(h.ref, 2)))?.status).toBe('SUCCEEDED');
    expect(await client.get(attemptIdOf(h.ref, 3))).toBeUndefined();
    expect(launches(h.runDir)).toEqual([h.ref, attemptIdOf(h.ref, 2)]);
  },
  async afterCancel(h) {
    expect((await client.get(h.ref))?.status).toBe('STOPPED');
  },
  finishTimeoutMs: 90_000,
});
