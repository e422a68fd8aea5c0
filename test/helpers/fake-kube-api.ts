// A protocol stand-in for the Kubernetes API server, NOT a cluster: a node:http server on 127.0.0.1 that answers
// exactly the calls the Kubernetes backend makes (batch/v1 Jobs: create, get, delete; core/v1 pods: list by label
// selector, log), with Status objects (404 NotFound, 409 AlreadyExists) as the real one sends them. It keeps Jobs
// in memory and "runs" each Job's one pod by spawning the container's command/args as a local process in its
// working directory (the run dir), so the trainer, its metrics and its checkpoints are real. A test drives what a
// cluster would do on its own: evict a pod, let activeDeadlineSeconds pass.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import { KubeConfig, type V1Job, type V1Pod } from '@kubernetes/client-node';

interface PodRecord {
  pod: V1Pod;
  proc?: ChildProcess;
  log: string[];
  evicted?: boolean;
}

interface JobRecord {
  job: V1Job;
  pods: PodRecord[];
  deadlineTimer?: NodeJS.Timeout;
  deadlineExceeded?: boolean;
}

export interface ApiCall {
  method: string;
  path: string;
  query: Record<string, string>;
}

export class FakeKubeApi {
  readonly calls: ApiCall[] = [];
  /** Every Job body POSTed, accepted or not. */
  readonly createRequests: V1Job[] = [];
  /** Jobs actually created (201). */
  readonly created: V1Job[] = [];
  readonly deletes: { name: string; propagationPolicy?: string }[] = [];
  private readonly jobs = new Map<string, JobRecord>();
  private server?: http.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  /** Listens on 127.0.0.1:`port` (0: any free port). */
  async start(port = 0): Promise<this> {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((e) => this.send(res, 500, status(500, 'InternalError', String(e))));
    });
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  kubeConfig(): KubeConfig {
    return kubeConfigFor(this.url);
  }

  /** Kills every process it started and stops listening. */
  async close(): Promise<void> {
    for (const j of this.jobs.values()) {
      clearTimeout(j.deadlineTimer);
      for (const p of j.pods) killGroup(p.proc, 'SIGKILL');
    }
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  job(namespace: string, name: string): V1Job | undefined {
    return this.jobs.get(`${namespace}/${name}`)?.job;
  }

  /** The pid of the Job's running trainer, if any. */
  pidOf(namespace: string, name: string): number | undefined {
    const p = this.jobs.get(`${namespace}/${name}`)?.pods.at(-1)?.proc;
    return p && p.exitCode === null && p.signalCode === null ? p.pid : undefined;
  }

  /** What the TTL-after-finished controller does: the Job and its pods are gone, with no DELETE from the backend. */
  expire(namespace: string, name: string): void {
    this.jobs.delete(`${namespace}/${name}`);
  }

  /** What the kubelet does under node pressure (or the control plane on preemption): SIGTERM, reason Evicted, DisruptionTarget. */
  evict(namespace: string, name: string): void {
    const rec = this.jobs.get(`${namespace}/${name}`);
    const pod = rec?.pods.at(-1);
    if (!rec || !pod?.proc) throw new Error(`fake kube api: no running pod for job ${namespace}/${name}`);
    pod.evicted = true;
    pod.pod.status!.conditions = [
      ...(pod.pod.status!.conditions ?? []),
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'TerminationByKubelet',
        message: 'The node was low on resource: memory.',
        lastTransitionTime: new Date(),
      },
    ];
    killGroup(pod.proc, 'SIGTERM');
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const query = Object.fromEntries(url.searchParams);
    this.calls.push({ method: req.method ?? '', path: url.pathname, query });
    const body = await readBody(req);
    let m: RegExpExecArray | null;
    if ((m = /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs$/.exec(url.pathname)) && req.method === 'POST')
      return this.createJob(res, m[1], JSON.parse(body) as V1Job);
    if ((m = /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs\/([^/]+)$/.exec(url.pathname))) {
      const [ns, name] = [m[1], m[2]];
      const rec = this.jobs.get(`${ns}/${name}`);
      if (!rec) return this.send(res, 404, status(404, 'NotFound', `jobs.batch "${name}" not found`, name));
      if (req.method === 'GET') return this.send(res, 200, rec.job);
      if (req.method === 'DELETE') {
        const policy =
          query.propagationPolicy ?? (body ? (JSON.parse(body) as { propagationPolicy?: string }).propagationPolicy : undefined);
        this.deletes.push({ name, propagationPolicy: policy });
        return this.send(res, 200, this.deleteJob(ns, name, rec, policy));
      }
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/.exec(url.pathname)) && req.method === 'GET') {
      const items = [...this.jobs.values()]
        .flatMap((j) => j.pods.map((p) => p.pod))
        .filter((p) => p.metadata!.namespace === m![1] && matches(p, query.labelSelector));
      return this.send(res, 200, { kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '1' }, items });
    }
    if ((m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/.exec(url.pathname)) && req.method === 'GET') {
      const pod = [...this.jobs.values()]
        .flatMap((j) => j.pods)
        .find((p) => p.pod.metadata!.namespace === m![1] && p.pod.metadata!.name === m![2]);
      if (!pod) return this.send(res, 404, status(404, 'NotFound', `pods "${m[2]}" not found`, m[2]));
      const lines = pod.log.join('').split('\n');
      if (lines.at(-1) === '') lines.pop();
      const tail = query.tailLines ? lines.slice(-Number(query.tailLines)) : lines;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(tail.map((l) => `${l}\n`).join(''));
      return;
    }
    this.send(res, 404, status(404, 'NotFound', `the fake API server does not serve ${req.method} ${url.pathname}`));
  }

  private createJob(res: http.ServerResponse, ns: string, body: V1Job): void {
    this.createRequests.push(structuredClone(body));
    const name = body.metadata!.name!;
    if (this.jobs.has(`${ns}/${name}`))
      return this.send(res, 409, status(409, 'AlreadyExists', `jobs.batch "${name}" already exists`, name));
    const uid = crypto.randomUUID();
    const job: V1Job = {
      ...body,
      metadata: { ...body.metadata, namespace: ns, uid, resourceVersion: '1', creationTimestamp: new Date() },
      status: { active: 1, startTime: new Date(), ready: 0 },
    };
    const rec: JobRecord = { job, pods: [] };
    this.jobs.set(`${ns}/${name}`, rec);
    this.created.push(structuredClone(body));
    this.send(res, 201, job);
    this.runPod(ns, rec);
  }

  /** The Job controller and the kubelet in one: one pod, its container's command run here. */
  private runPod(ns: string, rec: JobRecord): void {
    const job = rec.job;
    const name = job.metadata!.name!;
    const c = job.spec!.template.spec!.containers[0];
    const uid = job.metadata!.uid!;
    const pod: V1Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `${name}-${crypto.randomBytes(3).toString('hex').slice(0, 5)}`,
        namespace: ns,
        creationTimestamp: new Date(),
        labels: {
          ...(job.spec!.template.metadata?.labels ?? {}),
          'batch.kubernetes.io/job-name': name,
          'job-name': name,
          'batch.kubernetes.io/controller-uid': uid,
          'controller-uid': uid,
        },
      },
      status: {
        phase: 'Running',
        conditions: [],
        containerStatuses: [
          { name: c.name, image: c.image!, imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date() } } },
        ],
      },
    };
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of c.env ?? []) env[e.name] = e.value ?? '';
    const argv = [...(c.command ?? []), ...(c.args ?? [])];
    const started = new Date();
    const proc = spawn(argv[0], argv.slice(1), {
      cwd: c.workingDir ?? os.tmpdir(),
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pr: PodRecord = { pod, proc, log: [] };
    rec.pods.push(pr);
    proc.stdout!.on('data', (d: Buffer) => pr.log.push(d.toString()));
    proc.stderr!.on('data', (d: Buffer) => pr.log.push(d.toString()));
    proc.on('error', (e) => pr.log.push(`fake kube api: cannot start ${argv[0]}: ${e.message}\n`));
    proc.on('close', (code, signal) => {
      clearTimeout(rec.deadlineTimer);
      const exitCode = code ?? 128 + (signal ? os.constants.signals[signal] : 0);
      const finished = new Date();
      pod.status!.phase = exitCode === 0 && !pr.evicted ? 'Succeeded' : 'Failed';
      pod.status!.containerStatuses![0].ready = false;
      pod.status!.containerStatuses![0].state = {
        terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', startedAt: started, finishedAt: finished },
      };
      if (pr.evicted) {
        pod.status!.reason = 'Evicted';
        pod.status!.message = 'The node was low on resource: memory.';
      }
      if (rec.deadlineExceeded) pod.status!.reason = 'DeadlineExceeded';
      this.finishJob(rec, exitCode === 0 && !pr.evicted && !rec.deadlineExceeded);
      pr.proc = undefined;
    });
    const deadline = job.spec!.activeDeadlineSeconds;
    if (deadline !== undefined) {
      rec.deadlineTimer = setTimeout(() => {
        rec.deadlineExceeded = true;
        killGroup(pr.proc, 'SIGTERM');
      }, deadline * 1000);
    }
  }

  private finishJob(rec: JobRecord, ok: boolean): void {
    const s = rec.job.status!;
    const now = new Date();
    s.active = 0;
    s.ready = 0;
    if (rec.job.metadata!.deletionTimestamp) return;
    if (ok) {
      s.succeeded = 1;
      s.completionTime = now;
      s.conditions = [
        {
          type: 'SuccessCriteriaMet',
          status: 'True',
          lastTransitionTime: now,
          lastProbeTime: now,
          reason: 'CompletionsReached',
          message: 'Reached expected number of succeeded pods',
        },
        {
          type: 'Complete',
          status: 'True',
          lastTransitionTime: now,
          lastProbeTime: now,
          reason: 'CompletionsReached',
          message: 'Reached expected number of succeeded pods',
        },
      ];
    } else {
      s.failed = 1;
      const [reason, message] = rec.deadlineExceeded
        ? ['DeadlineExceeded', 'Job was active longer than specified deadline']
        : ['BackoffLimitExceeded', 'Job has reached the specified backoff limit'];
      s.conditions = [
        { type: 'FailureTarget', status: 'True', lastTransitionTime: now, lastProbeTime: now, reason, message },
        { type: 'Failed', status: 'True', lastTransitionTime: now, lastProbeTime: now, reason, message },
      ];
    }
  }

  /** Foreground: the Job stays, marked for deletion, until its pod's process has ended; Background: gone at once. */
  private deleteJob(ns: string, name: string, rec: JobRecord, policy: string | undefined): V1Job {
    clearTimeout(rec.deadlineTimer);
    const key = `${ns}/${name}`;
    const running = rec.pods.map((p) => p.proc).filter((p): p is ChildProcess => p !== undefined);
    for (const p of running) killGroup(p, 'SIGTERM');
    if (policy === 'Foreground' && running.length > 0) {
      rec.job.metadata!.deletionTimestamp = new Date();
      rec.job.metadata!.finalizers = ['foregroundDeletion'];
      void Promise.all(
        running.map((p) => new Promise((r) => (p.exitCode !== null || p.signalCode !== null ? r(null) : p.once('close', r)))),
      ).then(() => {
        if (this.jobs.get(key) === rec) this.jobs.delete(key);
      });
    } else {
      this.jobs.delete(key);
    }
    return rec.job;
  }

  private send(res: http.ServerResponse, code: number, obj: unknown): void {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(obj));
  }
}

export function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'fake', server, skipTLSVerify: true }],
    users: [{ name: 'fake', token: 'fake-token' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  return kc;
}

/** A kubeconfig file for KUBECONFIG (the backend's loadFromDefault path). */
export function writeKubeconfig(file: string, server: string): void {
  fs.writeFileSync(file, kubeConfigFor(server).exportConfig());
}

function status(code: number, reason: string, message: string, name?: string) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    ...(name ? { details: { name, group: 'batch', kind: 'jobs' } } : {}),
    code,
  };
}

/** Equality-based selectors only (`a=b,c=d`): all the backend sends. */
function matches(pod: V1Pod, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return pod.metadata?.labels?.[k] === v;
  });
}

function killGroup(p: ChildProcess | undefined, sig: NodeJS.Signals): void {
  if (!p?.pid) return;
  try {
    process.kill(-p.pid, sig);
  } catch {
    /* already gone */
  }
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let s = '';
    req.on('data', (d: Buffer) => (s += d.toString()));
    req.on('end', () => resolve(s));
    req.on('error', reject);
  });
}
