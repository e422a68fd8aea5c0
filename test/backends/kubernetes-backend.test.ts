// The Kubernetes backend, with the real @kubernetes/client-node client, against test/helpers/fake-kube-api.ts: a
// PROTOCOL STAND-IN for the API server on 127.0.0.1, NOT a cluster. It speaks the Job, pod and log calls the
// backend makes and "runs" each Job's pod by spawning the container's command locally in the run dir, so the
// fixture trainer, its metrics and checkpoints are real; the test plays the cluster's part in evictions and
// deadlines. No scheduler, kubelet, image pull or PVC is exercised here: that needs a real cluster.
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import type { JobHandle, JobStatus } from '../../backends';
import { backendFor } from '../../backends';
import { KubernetesBackend, type KubernetesBackendOptions } from '../../backends/kubernetes/kubernetes-backend';
import { jobManifest, jobNameOf } from '../../backends/kubernetes/job-manifest';
import { KubeApiError, KubeJobs } from '../../backends/kubernetes/kube-jobs';
import { InvalidSpecError } from '../../core/spec';
import { parseSpec } from '../../tasks/task-spec';
import { experiments, trainingRuns } from '../../db/schema';
import { scratchDir } from '../helpers/env';
import { FakeKubeApi, kubeConfigFor, writeKubeconfig } from '../helpers/fake-kube-api';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { freePort } from '../helpers/ports';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { launchDirOf } from '../../backends/run-dir-files';
import { backendConformance, jobEnded, launchLines, processesOf, steps } from './conformance';

const FIXTURE_TRAINER = path.join(__dirname, '..', 'fixtures', 'fixture-trainer.js');
const NS = 'fw-test';
const IMAGE = 'ghcr.io/example/flywheel-trainer:test';
let fake: FakeKubeApi;

beforeAll(async () => {
  fake = await new FakeKubeApi().start();
});
afterAll(() => fake?.close());

/** A run directory (under a FLYWHEEL_HOME-like …/runs/) with a run.json for the fixture trainer, and its launch request. */
function fixtureRun(label: string, params: Record<string, number | boolean>) {
  const runId = `${uniqueName(label)}/inner/1/e0/r1`;
  const runDir = path.join(scratchDir('k8s-home'), 'runs', runId.replace(/\//g, '_'));
  fs.mkdirSync(runDir, { recursive: true });
  fs.writeFileSync(path.join(runDir, 'run.json'), JSON.stringify({ runId, params, checkpointEvery: 0 }));
  return { runId, runDir, argv: [process.execPath, FIXTURE_TRAINER, 'train', '--run-dir', runDir], campaignId: runId.split('/')[0] };
}

function backend(opts: KubernetesBackendOptions = {}): KubernetesBackend {
  return new KubernetesBackend({ kubeConfig: fake.kubeConfig(), namespace: NS, image: IMAGE, statusIntervalMs: 50, ...opts });
}

function finished(b: KubernetesBackend, h: JobHandle, timeoutMs = 60_000): Promise<JobStatus> {
  return jobEnded(b, h, timeoutMs);
}

const createsOf = (name: string) => fake.createRequests.filter((j) => j.metadata?.name === name).length;
const createdOf = (runId: string) =>
  fake.created.filter((j) => j.metadata?.name?.startsWith(jobNameOf(runId))).map((j) => j.metadata!.name);
test('the Job name is an RFC 1123 label of at most 63 characters, deterministic per run id', () => {
  const long = `My_Campaign.${'x'.repeat(120)}/inner/1/e12/r3`;
  for (const id of ['a/inner/1/e0/r1', long, '///']) {
    const name = jobNameOf(id);
    expect(name).toBe(jobNameOf(id));
    expect(`${name}-r999`.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  }
  expect(jobNameOf('a/inner/1/e0/r1')).not.toBe(jobNameOf('a/inner/1/e0/r2'));
});

test('the spec requires an image for the kubernetes kind, at a clear path', () => {
  const spec = (backend: unknown) => ({ ...fixtureSpec('k8s-spec', { steps: 1 }), backend });
  expect(() => parseSpec(spec({ kind: 'kubernetes' }))).toThrow(InvalidSpecError);
  expect(() => parseSpec(spec({ kind: 'kubernetes' }))).toThrow(/backend\.kubernetes\.image: is required when backend\.kind is kubernetes/);
  const ok = parseSpec(spec({ kind: 'kubernetes', kubernetes: { image: IMAGE } })).backend.kubernetes!;
  expect(ok).toMatchObject({
    namespace: 'default',
    image: IMAGE,
    gpus: 0,
    nodeSelector: {},
    tolerations: [],
    ttlSecondsAfterFinished: 86_400,
  });
  expect(backendFor('kubernetes', { kubernetes: { ...ok, kubeConfig: fake.kubeConfig() } }).kind).toBe('kubernetes');
});

test('launching twice, and twice at once from two backends, creates one Job', async () => {
  const once = fixtureRun('twice', { steps: 5 });
  const b = backend();
  const h1 = await b.launch(once);
  const h2 = await b.launch(once);
  expect(h2).toEqual(h1);
  expect(h1.ref).toBe(`${NS}/${jobNameOf(once.runId)}`);

  const racing = fixtureRun('race', { steps: 5 });
  const [r1, r2] = await Promise.all([backend().launch(racing), backend().launch(racing)]);
  expect(r2).toEqual(r1);
  // Both asked; the API server refused the second with 409 AlreadyExists, and that launch reattached.
  expect(createsOf(jobNameOf(racing.runId))).toBe(2);

  for (const [req, h] of [
    [once, h1],
    [racing, r1],
  ] as const) {
    expect((await finished(b, h)).state).toBe('succeeded');
    expect(createdOf(req.runId)).toEqual([jobNameOf(req.runId)]);
    expect(launchLines(req.runDir)).toHaveLength(1);
  }
});

test('the Job manifest: image, argv arrays, GPU limits, nodeSelector, tolerations, PVC mount, backoffLimit 0, deadline, TTL', async () => {
  const req = fixtureRun('manifest', { steps: 2 });
  const tolerations = [{ key: 'nvidia.com/gpu', operator: 'Exists' as const, effect: 'NoSchedule' as const }];
  const b = backend({
    gpus: 2,
    cpu: '8',
    memory: '32Gi',
    nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' },
    tolerations,
    pvcName: 'flywheel-home',
    serviceAccount: 'flywheel-trainer',
    ttlSecondsAfterFinished: 600,
  });
  const h = await b.launch({ ...req, timeLimitSeconds: 900 });
  const job = fake.created.find((j) => j.metadata?.name === jobNameOf(req.runId))!;
  const home = path.dirname(path.dirname(req.runDir));
  expect(job.metadata).toMatchObject({
    namespace: NS,
    labels: { 'flywheel.dev/campaign': req.campaignId, 'flywheel.dev/run-id': expect.stringMatching(/^[0-9a-f]{12}$/) },
    annotations: { 'flywheel.dev/run-id': req.runId },
  });
  expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900, ttlSecondsAfterFinished: 600 });
  const pod = job.spec!.template.spec!;
  expect(pod).toMatchObject({
    restartPolicy: 'Never',
    serviceAccountName: 'flywheel-trainer',
    nodeSelector: { 'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3' },
    tolerations,
    volumes: [{ name: 'flywheel-home', persistentVolumeClaim: { claimName: 'flywheel-home' } }],
  });
  const c = pod.containers[0];
  expect(c.image).toBe(IMAGE);
  expect(c.command).toEqual([process.execPath]);
  expect(c.args).toEqual([FIXTURE_TRAINER, 'train', '--run-dir', req.runDir]);
  expect(c.workingDir).toBe(req.runDir);
  expect(c.resources).toEqual({ limits: { cpu: '8', memory: '32Gi', 'nvidia.com/gpu': '2' }, requests: { cpu: '8', memory: '32Gi' } });
  expect(c.volumeMounts).toEqual([{ name: 'flywheel-home', mountPath: home }]);
  expect(await finished(b, h)).toMatchObject({ state: 'succeeded' });
});

test("a completed Job is succeeded, with its metrics, checkpoint and the trainer's time", async () => {
  const req = fixtureRun('ok', { steps: 10, sleepMs: 300 });
  const b = backend();
  const h = await b.launch(req);
  expect(h).toMatchObject({ backend: 'kubernetes', runId: req.runId, runDir: req.runDir });
  expect(await b.status(h)).toEqual({ state: 'running' });
  const s = await finished(b, h);
  expect(s).toMatchObject({ state: 'succeeded', exitCode: 0 });
  expect(s.reason).toBeUndefined();
  expect(s.trainerSeconds).toBeGreaterThan(0);
  expect(steps(req.runDir)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const manifest = JSON.parse(fs.readFileSync(path.join(req.runDir, 'checkpoints', 'manifest.json'), 'utf8'));
  expect(manifest.checkpoints.map((c: { step: number }) => c.step)).toEqual([10]);
  // Cancelling a finished Job leaves it to its TTL (its pod's exit code and log stay readable).
  await b.cancel(h);
  expect(fake.job(NS, jobNameOf(req.runId))).toBeDefined();
  expect(fake.deletes.map((d) => d.name)).not.toContain(jobNameOf(req.runId));
});

test('a failing container is failed with its exit code, and stderrTail is the pod log', async () => {
  const req = fixtureRun('crash', { crash: true });
  const b = backend();
  const h = await b.launch(req);
  const s = await finished(b, h);
  expect(s).toMatchObject({ state: 'failed', exitCode: 3 });
  expect(s.reason).toBeUndefined();
  expect(await b.stderrTail(h, 1)).toBe(`fixture-trainer: exploding on purpose (run ${req.runId})`);
  expect(fake.calls.some((c) => c.path.endsWith('/log') && c.query.tailLines === '1' && c.query.container === 'trainer')).toBe(true);
  // Once Kubernetes deletes the finished Job (its TTL), the outcome recorded in the run dir still answers.
  fake.expire(NS, jobNameOf(req.runId));
  expect(await backend().status(h)).toMatchObject({ state: 'failed', exitCode: 3 });
});

test('an evicted pod: the Job is deleted and recreated as -r2 in the same run dir, the trainer resumes from its checkpoint and succeeds', async () => {
  const req = fixtureRun('evict', { steps: 60, sleepMs: 6_000, checkpointEvery: 10 });
  const b = backend();
  const h = await b.launch(req);
  const base = jobNameOf(req.runId);
  await eventually('a checkpoint and a few steps after it', async () => (steps(req.runDir).length >= 13 ? true : undefined), 60_000);
  fake.evict(NS, base);
  const during = await eventually('the backend to see the eviction', async () => {
    const s = await b.status(h);
    return s.reason === 'preempted' ? s : undefined;
  });
  expect(during).toEqual({ state: 'running', reason: 'preempted' });
  expect(fake.deletes).toContainEqual({ name: base, propagationPolicy: 'Background' });
  expect(fake.job(NS, base)).toBeUndefined();

  const s = await finished(b, h);
  expect(s).toMatchObject({ state: 'succeeded', exitCode: 0 });
  expect(createdOf(req.runId)).toEqual([base, `${base}-r2`]);
  expect(launchLines(req.runDir).map((l) => l.split(' ')[0])).toEqual([base, `${base}-r2`]);
  const log = await b.stderrTail(h, 50);
  const resumedFrom = Number(/resuming from step (\d+)/.exec(log)?.[1]);
  expect(resumedFrom).toBeGreaterThanOrEqual(10);
  expect(resumedFrom % 10).toBe(0);
  // metrics.jsonl: the first pod's steps 1..k (k >= the checkpoint), then the second pod's checkpoint+1..60.
  const seen = steps(req.runDir);
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const restartAt = seen.lastIndexOf(resumedFrom + 1);
  expect(seen.slice(restartAt)).toEqual(range(resumedFrom + 1, 60));
  expect(seen.slice(0, restartAt)).toEqual(range(1, restartAt));
  // The same handle follows the run; a second look at the finished run creates nothing.
  expect(await backend().status(h)).toMatchObject({ state: 'succeeded' });
  expect(createdOf(req.runId)).toHaveLength(2);
}, 90_000);

test('a relaunch interrupted after recording its generation is finished by the next status()', async () => {
  const req = fixtureRun('relaunch-crash', { steps: 20, sleepMs: 2_000, checkpointEvery: 5 });
  const h = await backend().launch(req);
  const base = jobNameOf(req.runId);
  await eventually('a checkpoint', async () => (steps(req.runDir).length >= 6 ? true : undefined), 30_000);
  fake.evict(NS, base);
  await eventually('the Job to fail', async () => (fake.job(NS, base)?.status?.failed ? true : undefined), 30_000);
  // What a worker that died inside relaunch() leaves: the marker and the new generation, no new Job, the old one still there.
  fs.writeFileSync(path.join(launchDirOf(req.runDir), 'k8s_relaunch_2'), '');
  fs.writeFileSync(path.join(launchDirOf(req.runDir), 'k8s_generation'), '2\n');
  const fresh = backend();
  expect(await fresh.status(h)).toEqual({ state: 'running', reason: 'preempted' });
  expect(fake.job(NS, base)).toBeUndefined();
  expect(await finished(fresh, h)).toMatchObject({ state: 'succeeded' });
  expect(createdOf(req.runId)).toEqual([base, `${base}-r2`]);
  expect(steps(req.runDir).at(-1)).toBe(20);
});

test('a Job past activeDeadlineSeconds (DeadlineExceeded) is failed with reason timeout', async () => {
  const req = fixtureRun('deadline', { steps: 600, sleepMs: 600_000 });
  const b = backend({ activeDeadlineSeconds: 1 });
  const h = await b.launch(req);
  const s = await finished(b, h, 30_000);
  expect(s).toMatchObject({ state: 'failed', reason: 'timeout', exitCode: 143 });
  expect(fake.job(NS, jobNameOf(req.runId))?.status?.conditions?.find((c) => c.type === 'Failed')?.reason).toBe('DeadlineExceeded');
  expect(processesOf(req.runDir)).toEqual([]);
});

test('cancel deletes the Job in the foreground, waits until it is gone, and leaves no trainer process', async () => {
  const req = fixtureRun('cancel', { steps: 600, sleepMs: 600_000 });
  const b = backend();
  const h = await b.launch(req);
  await eventually('the trainer to start', async () => (steps(req.runDir).length > 0 ? true : undefined), 30_000);
  expect(processesOf(req.runDir).length).toBeGreaterThan(0);
  await b.cancel(h);
  expect(fake.deletes).toContainEqual({ name: jobNameOf(req.runId), propagationPolicy: 'Foreground' });
  expect(fake.job(NS, jobNameOf(req.runId))).toBeUndefined();
  expect(processesOf(req.runDir)).toEqual([]);
  expect(await b.status(h)).toMatchObject({ state: 'failed', reason: 'cancelled' });
  await b.cancel(h); // a second cancel of a gone Job is a no-op
});

test('a new backend instance (a restarted worker) reattaches to the running Job by name', async () => {
  const req = fixtureRun('reattach', { steps: 20, sleepMs: 3_000 });
  const h = await backend().launch(req);
  const fresh = backend();
  expect(await fresh.launch(req)).toEqual(h);
  expect(await fresh.status(h)).toEqual({ state: 'running' });
  expect(await finished(fresh, h)).toMatchObject({ state: 'succeeded' });
  expect(createsOf(jobNameOf(req.runId))).toBe(1);
  expect(steps(req.runDir)).toHaveLength(20);
});

test('a Job of another run under the same name (another install in the namespace) is refused, not adopted', async () => {
  const mine = fixtureRun('clash', { steps: 1 });
  const theirs = fixtureRun('clash-other', { steps: 1 });
  const body = jobManifest({ image: IMAGE, namespace: NS }, theirs, jobNameOf(mine.runId), 1);
  body.spec!.template.spec!.containers[0].args = ['-e', 'process.exit(0)'];
  expect(await new KubeJobs(fake.kubeConfig()).createJob(NS, body)).toBe('created');
  await expect(backend().launch(mine)).rejects.toThrow(`belongs to run "${theirs.runId}", not "${mine.runId}"`);
});

test('the API server down: one line naming the address', async () => {
  const port = await freePort();
  const b = new KubernetesBackend({ kubeConfig: kubeConfigFor(`http://127.0.0.1:${port}`), namespace: NS, image: IMAGE });
  const err = await b.launch(fixtureRun('down', { steps: 1 })).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(KubeApiError);
  expect((err as Error).message).toMatch(
    new RegExp(`^kubernetes get job ${NS}/fw-[0-9a-f]{12}-\\S+ at http://127\\.0\\.0\\.1:${port}: connection refused`),
  );
  expect((err as Error).message).not.toContain('\n');
});

describe('an inner loop on the Kubernetes backend (KUBECONFIG pointing at the stand-in)', () => {
  let harness: LoopHarness;
  let kubeconfigDir: string;
  const saved = process.env.KUBECONFIG;
  beforeAll(async () => {
    harness = await loopHarness('k8s-loop');
    kubeconfigDir = scratchDir('kubeconfig');
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
    await harness?.close();
  });
  const useServer = (url: string) => {
    const file = path.join(kubeconfigDir, `config-${url.replace(/\W+/g, '_')}`);
    writeKubeconfig(file, url);
    process.env.KUBECONFIG = file;
  };
  const runOf = async (experimentId: string) =>
    (await harness.db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, experimentId)))[0];
  const k8s = (extra: Record<string, unknown> = {}) => ({ kind: 'kubernetes', kubernetes: { namespace: NS, image: IMAGE, ...extra } });

  test('an experiment trains as a Job and its checkpoint is scored', async () => {
    useServer(fake.url);
    const workers = await harness.workers('t-k8s');
    try {
      const id = uniqueName('k8s');
      const wf = `${id}/inner/1`;
      const result = await (await workers.startLoop(id, { ...fixtureSpec(id, { steps: 10 }), backend: k8s() })).result();
      expect(result.best?.experimentId).toBe(`${wf}/e0`);
      const run = await runOf(`${wf}/e0`);
      expect(run).toMatchObject({ backend: 'kubernetes', status: 'succeeded', exitCode: 0, launches: 1 });
      expect(run.handle?.ref).toBe(`${NS}/${jobNameOf(run.id)}`);
      const job = fake.created.find((j) => j.metadata?.name === jobNameOf(run.id))!;
      expect(job.metadata?.labels?.['flywheel.dev/campaign']).toBe(id);
      expect(job.spec?.activeDeadlineSeconds).toBe(600); // innerLoop.trainingTimeoutSeconds' default
    } finally {
      await workers.stop();
    }
  });

  test('a Job ended by activeDeadlineSeconds is recorded as timed_out, with no second attempt', async () => {
    useServer(fake.url);
    const workers = await harness.workers('t-k8s-limit');
    try {
      const id = uniqueName('k8s-limit');
      const wf = `${id}/inner/1`;
      const spec = {
        ...fixtureSpec(id, { steps: 600, sleepMs: 600_000 }, { maxTrainingAttempts: 2 }),
        backend: k8s({ activeDeadlineSeconds: 2 }),
      };
      const result = await (await workers.startLoop(id, spec)).result();
      expect(result.best).toBeUndefined();
      const run = await runOf(`${wf}/e0`);
      expect(run.status).toBe('timed_out');
      const [exp] = await harness.db.db
        .select()
        .from(experiments)
        .where(eq(experiments.id, `${wf}/e0`));
      expect(exp.status).toBe('timed_out');
      expect(exp.error).toMatch(/kubernetes time limit/);
      expect(
        await harness.db.db
          .select()
          .from(trainingRuns)
          .where(eq(trainingRuns.experimentId, `${wf}/e0`)),
      ).toHaveLength(1);
    } finally {
      await workers.stop();
    }
  }, 120_000);

  test('with the API server down, launchTraining fails with one line naming the address and is retried until it is up', async () => {
    const port = await freePort();
    useServer(`http://127.0.0.1:${port}`);
    const workers = await harness.workers('t-k8s-down');
    let late: FakeKubeApi | undefined;
    try {
      const id = uniqueName('k8s-down');
      const h = await workers.startLoop(id, { ...fixtureSpec(id, { steps: 5 }), backend: k8s() });
      // The launch runs in the experiment's child workflow: the untrained baseline's first, as a fresh loop starts
      // its search only once the baseline has run (inner-baseline-first).
      const experiment = harness.client.workflow.getHandle(`${id}/inner/1/baseline`);
      const failure = await eventually('a failed launchTraining attempt', async () => {
        const pending = (await experiment.describe().catch(() => undefined))?.raw.pendingActivities ?? [];
        // The launch runs inside runTraining (launchTraining on its own before FEWER_ROUND_TRIPS).
        const launch = pending.find((a) => a.activityType?.name === 'runTraining' && (a.attempt ?? 0) >= 2);
        return launch?.lastFailure?.message ?? undefined;
      });
      expect(failure).toMatch(
        new RegExp(`^kubernetes get job ${NS}/fw-[0-9a-f]{12}-\\S+ at http://127\\.0\\.0\\.1:${port}: connection refused`),
      );
      expect(failure).not.toContain('\n');
      late = await new FakeKubeApi().start(port);
      const result = await h.result();
      expect(result.best?.experimentId).toBe(`${id}/inner/1/e0`);
      expect(await runOf(`${id}/inner/1/e0`)).toMatchObject({ status: 'succeeded', launches: 1 });
      // One Job per run (the untrained baseline's and e0's), each created once, after the server came up.
      const names = late.created.map((j) => j.metadata!.name);
      expect(names).toContain(jobNameOf(`${id}/inner/1/e0/r1`));
      expect(new Set(names).size).toBe(names.length);
    } finally {
      await workers.stop();
      await late?.close();
    }
  }, 120_000);
});

// The shared suite, with KUBECONFIG pointing the workers' own backends at the stand-in.
describe('through the shared suite', () => {
  const saved = process.env.KUBECONFIG;
  beforeAll(() => {
    const file = path.join(scratchDir('kubeconfig-conf'), 'config');
    writeKubeconfig(file, fake.url);
    process.env.KUBECONFIG = file;
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
  });
  backendConformance({
    kind: 'kubernetes',
    make: () => backend(),
    backendSpec: { kind: 'kubernetes', kubernetes: { namespace: NS, image: IMAGE } },
    // The stand-in enforces no deadline of its own: awaitTraining's clock (trainingTimeoutSeconds) ends the run.
    timeLimited: (spec) => ({ ...spec, innerLoop: { ...spec.innerLoop, trainingTimeoutSeconds: 3 } }),
    async preempt(_b, h) {
      fake.evict(NS, jobNameOf(h.runId));
    },
    async afterCancel(h) {
      expect(fake.job(NS, jobNameOf(h.runId))).toBeUndefined();
    },
  });
});
