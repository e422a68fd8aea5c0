// The Kubernetes backend: each run is a batch/v1 Job named from the run id, its pod mounting the run directory
// from a PVC the training worker shares. The Job's first manifest, the current relaunch generation, every Job created
// (launches.log) and the outcome seen are kept in the run's launch directory (`<runDir>.launch`), never in the run
// directory the trainer writes (a relaunch must not take a manifest or an outcome the trainer forged), so a retried
// launch or a new worker finds the Job it already created instead of creating a second one, and a Job deleted by its
// TTL still has an outcome.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig, V1Job, V1Pod } from '@kubernetes/client-node';
import { LAUNCHES_LOG } from '../../core/contract-files';
import type { JobHandle, JobStatus, LaunchRequest, TrainingBackend } from '../backend';
import { launchDirOf, makeLaunchDir, readTrimmed, writeAtomic } from '../run-dir-files';
import { CONTAINER, RUN_ID_ANNOTATION, generationName, jobManifest, jobNameOf, type KubernetesJobOptions } from './job-manifest';
import { KubeJobs, defaultKubeConfig } from './kube-jobs';

export interface KubernetesBackendOptions extends Partial<KubernetesJobOptions> {
  /** The cluster to talk to. @default loadFromDefault(): KUBECONFIG, ~/.kube/config, or in-cluster */
  kubeConfig?: KubeConfig;
  /** Least time between two questions to the API server about one run; status() answers from the last reply in between. @default 1000 */
  statusIntervalMs?: number;
  /** How long cancel() waits for the Job (and, with Foreground deletion, its pods) to be gone. @default 120000 */
  cancelWaitMs?: number;
}

/** Launch-dir records: the generation-1 manifest, the current generation, the outcome once seen. */
const MANIFEST_FILE = 'k8s-job.json';
const GENERATION_FILE = 'k8s_generation';
const OUTCOME_FILE = 'k8s_outcome.json';

export class KubernetesBackend implements TrainingBackend {
  readonly kind = 'kubernetes';
  private readonly o: KubernetesBackendOptions;
  private kube?: KubeJobs;
  private readonly lastStatus = new Map<string, { at: number; status: JobStatus }>();

  constructor(opts: KubernetesBackendOptions = {}) {
    this.o = opts;
  }

  private get api(): KubeJobs {
    this.kube ??= new KubeJobs(this.o.kubeConfig ?? defaultKubeConfig());
    return this.kube;
  }

  async launch(req: LaunchRequest): Promise<JobHandle> {
    if (!this.o.image) throw new Error("kubernetes backend: backend.kubernetes.image is not set (the trainer's container image)");
    const namespace = this.o.namespace ?? 'default';
    const base = jobNameOf(req.runId);
    const handle: JobHandle = { backend: this.kind, runId: req.runId, runDir: req.runDir, ref: `${namespace}/${base}` };
    fs.mkdirSync(req.runDir, { recursive: true });
    const dir = makeLaunchDir(req.runDir);
    const name = generationName(base, generationOf(dir));
    const found = await this.api.readJob(namespace, name);
    if (found) return this.adopt(handle, found);
    // Created once already, and Kubernetes has since forgotten it (TTL) or a relaunch is under way: status() knows.
    if (launchedNames(dir).length > 0) return handle;

    const body = jobManifest({ ...this.o, image: this.o.image }, req, name, 1);
    writeAtomic(path.join(dir, MANIFEST_FILE), JSON.stringify(body, null, 2));
    if ((await this.api.createJob(namespace, body)) === 'created') {
      recordLaunch(dir, name);
      return handle;
    }
    // A concurrent launch (a retry racing a slow first attempt, another worker) created it first.
    const raced = await this.api.readJob(namespace, name);
    if (!raced) throw new Error(`kubernetes backend: job ${namespace}/${name} already exists but cannot be read back`);
    return this.adopt(handle, raced);
  }

  async status(handle: JobHandle): Promise<JobStatus> {
    const cached = this.lastStatus.get(handle.ref);
    if (cached && Date.now() - cached.at < (this.o.statusIntervalMs ?? 1000)) return cached.status;
    const status = await this.queryStatus(handle);
    this.lastStatus.set(handle.ref, { at: Date.now(), status });
    return status;
  }

  async cancel(handle: JobHandle): Promise<void> {
    this.lastStatus.delete(handle.ref);
    const { namespace, name } = current(handle);
    const before = await this.api.readJob(namespace, name);
    // A finished Job is left to its TTL: deleting it would lose the pod's exit code and log.
    if (!before || terminal(before)) return;
    writeAtomic(
      path.join(launchDirOf(handle.runDir), OUTCOME_FILE),
      JSON.stringify({ state: 'failed', reason: 'cancelled' } satisfies JobStatus),
    );
    // Foreground: the API server keeps the Job (with a deletionTimestamp) until its pods are gone.
    await this.api.deleteJob(namespace, name, 'Foreground');
    const wait = this.o.cancelWaitMs ?? 120_000;
    const deadline = Date.now() + wait;
    while (await this.api.readJob(namespace, name)) {
      if (Date.now() > deadline)
        throw new Error(`kubernetes backend: job ${namespace}/${name} is still there ${wait} ms after its deletion`);
      await sleep(200);
    }
  }

  async stderrTail(handle: JobHandle, lines = 20): Promise<string> {
    const { namespace, name } = current(handle);
    const job = await this.api.readJob(namespace, name);
    if (!job) return '';
    const pod = newest(await this.podsOf(job));
    return pod?.metadata?.name ? (await this.api.podLog(namespace, pod.metadata.name, CONTAINER, lines)).trimEnd() : '';
  }

  private async queryStatus(handle: JobHandle): Promise<JobStatus> {
    const { namespace, name, generation } = current(handle);
    const dir = launchDirOf(handle.runDir);
    const job = await this.api.readJob(namespace, name);
    if (!job || job.metadata?.annotations?.[RUN_ID_ANNOTATION] !== handle.runId) {
      const recorded = readOutcome(dir);
      if (recorded) return recorded;
      // A relaunch that deleted the old Job but died before creating the new one: finish it.
      if (generation > 1 && !launchedNames(dir).includes(name)) return this.createGeneration(handle, generation);
      return { state: 'lost' };
    }
    if (job.metadata?.deletionTimestamp) return readOutcome(dir) ?? { state: 'running' };
    const failed = condition(job, 'Failed');
    if (condition(job, 'Complete')) {
      const pod = newest(await this.podsOf(job));
      return this.settle(handle, { state: 'succeeded', exitCode: 0, trainerSeconds: secondsOf(pod) });
    }
    if (!failed) return { state: 'running' };
    const pods = await this.podsOf(job);
    const pod = newest(pods);
    if (failed.reason === 'DeadlineExceeded')
      return this.settle(handle, { state: 'failed', exitCode: exitCodeOf(pod), reason: 'timeout', trainerSeconds: secondsOf(pod) });
    if (pods.some(disrupted)) return this.relaunch(handle, generation);
    return this.settle(handle, { state: 'failed', exitCode: exitCodeOf(pod), trainerSeconds: secondsOf(pod) });
  }

  /**
   * The pod was evicted or preempted: not the trainer's fault. Delete the Job and create the next generation
   * (`-r2`, `-r3`) in the same run directory, where the trainer resumes from its newest checkpoint.
   */
  private async relaunch(handle: JobHandle, generation: number): Promise<JobStatus> {
    const next = generation + 1;
    // Two workers may see the same eviction: the one that creates the marker moves the run on, once. A marker
    // left by a worker that died before recording the new generation is taken over after a minute.
    const dir = launchDirOf(handle.runDir);
    const marker = path.join(dir, `k8s_relaunch_${next}`);
    try {
      fs.closeSync(fs.openSync(marker, 'wx'));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (Date.now() - fs.statSync(marker).mtimeMs < 60_000) return { state: 'running', reason: 'preempted' };
      fs.utimesSync(marker, new Date(), new Date());
    }
    // The generation is recorded first: from here on, status() finishes an interrupted relaunch itself.
    writeAtomic(path.join(dir, GENERATION_FILE), `${next}\n`);
    return this.createGeneration(handle, next);
  }

  /** Deletes the previous generation's Job (if still there) and creates this one's from the run's first manifest. */
  private async createGeneration(handle: JobHandle, generation: number): Promise<JobStatus> {
    const [namespace, base] = handle.ref.split('/');
    await this.api.deleteJob(namespace, generationName(base, generation - 1), 'Background');
    const name = generationName(base, generation);
    const dir = launchDirOf(handle.runDir);
    const first = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST_FILE), 'utf8')) as V1Job;
    const body: V1Job = { ...first, metadata: { ...first.metadata, name } };
    const container = body.spec!.template.spec!.containers[0];
    container.env = (container.env ?? []).map((e) => (e.name === 'FLYWHEEL_JOB_GENERATION' ? { ...e, value: String(generation) } : e));
    if ((await this.api.createJob(namespace, body)) === 'created') recordLaunch(dir, name);
    return { state: 'running', reason: 'preempted' };
  }

  private adopt(handle: JobHandle, job: V1Job): JobHandle {
    const owner = job.metadata?.annotations?.[RUN_ID_ANNOTATION];
    if (owner !== handle.runId) {
      throw new Error(
        `kubernetes backend: job ${handle.ref} belongs to run "${owner}", not "${handle.runId}" (another Flywheel install in this namespace?)`,
      );
    }
    return handle;
  }

  private async podsOf(job: V1Job): Promise<V1Pod[]> {
    return this.api.listPods(
      job.metadata!.namespace ?? this.o.namespace ?? 'default',
      `batch.kubernetes.io/controller-uid=${job.metadata!.uid}`,
    );
  }

  /** A finished Job's outcome, kept in the launch dir: Kubernetes deletes the Job after ttlSecondsAfterFinished. */
  private settle(handle: JobHandle, status: JobStatus): JobStatus {
    writeAtomic(path.join(launchDirOf(handle.runDir), OUTCOME_FILE), JSON.stringify(status));
    return status;
  }
}

function current(handle: JobHandle): { namespace: string; name: string; generation: number } {
  const [namespace, base] = handle.ref.split('/');
  const generation = generationOf(launchDirOf(handle.runDir));
  return { namespace, name: generationName(base, generation), generation };
}

function generationOf(launchDir: string): number {
  const n = Number(readTrimmed(path.join(launchDir, GENERATION_FILE)));
  return Number.isInteger(n) && n > 1 ? n : 1;
}

const condition = (job: V1Job, type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
const terminal = (job: V1Job) => Boolean(condition(job, 'Complete') || condition(job, 'Failed'));

/** Evicted by the kubelet (reason Evicted) or disrupted by the control plane (preemption, drain, taint). */
function disrupted(pod: V1Pod): boolean {
  return (
    pod.status?.reason === 'Evicted' || Boolean(pod.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True'))
  );
}

function newest(pods: V1Pod[]): V1Pod | undefined {
  const t = (p: V1Pod) => new Date(p.metadata?.creationTimestamp ?? 0).getTime();
  return [...pods].sort((a, b) => t(b) - t(a))[0];
}

function terminated(pod: V1Pod | undefined) {
  return pod?.status?.containerStatuses?.find((c) => c.name === CONTAINER)?.state?.terminated;
}

const exitCodeOf = (pod: V1Pod | undefined) => terminated(pod)?.exitCode;

function secondsOf(pod: V1Pod | undefined): number | undefined {
  const t = terminated(pod);
  if (!t?.startedAt || !t.finishedAt) return undefined;
  const s = (new Date(t.finishedAt).getTime() - new Date(t.startedAt).getTime()) / 1000;
  return s >= 0 ? s : undefined;
}

function readOutcome(launchDir: string): JobStatus | undefined {
  const s = readTrimmed(path.join(launchDir, OUTCOME_FILE));
  return s === undefined ? undefined : (JSON.parse(s) as JobStatus);
}

/** Names of the Jobs created for this run, oldest first (awaitTraining counts the lines as launches). */
function launchedNames(launchDir: string): string[] {
  return (readTrimmed(path.join(launchDir, LAUNCHES_LOG)) ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' ')[0]);
}

function recordLaunch(launchDir: string, name: string): void {
  fs.appendFileSync(path.join(launchDir, LAUNCHES_LOG), `${name} ${new Date().toISOString()}\n`);
}
