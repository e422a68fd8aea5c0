// A thin wrapper over @kubernetes/client-node for exactly the calls the backend makes: create/read/delete a
// namespaced Job, list its pods, read a pod's log. Every failure becomes one KubeApiError line naming the call,
// the API server's address and its own message (a Status object's reason and message, or the socket error).
import { ApiException, BatchV1Api, CoreV1Api, KubeConfig, type V1Job, type V1Pod } from '@kubernetes/client-node';
import { FlywheelError } from '../../core/errors';

export class KubeApiError extends FlywheelError {
  constructor(
    readonly call: string,
    readonly server: string,
    message: string,
    /** The HTTP status, when the API server answered. */
    readonly code?: number,
    /** The Status object's `reason` (NotFound, AlreadyExists, Forbidden, …). */
    readonly reason?: string,
  ) {
    super(`kubernetes ${call} at ${server}: ${message}`);
  }
}

/** The kubeconfig from `KUBECONFIG`, ~/.kube/config, or the pod's service account (in-cluster). */
export function defaultKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  try {
    kc.loadFromDefault();
  } catch (e) {
    const from = process.env.KUBECONFIG ? `KUBECONFIG=${process.env.KUBECONFIG}` : '~/.kube/config';
    throw new Error(`kubernetes backend: cannot load the kubeconfig from ${from}: ${(e as Error).message.split('\n')[0]}`);
  }
  return kc;
}

export class KubeJobs {
  private readonly batch: BatchV1Api;
  private readonly core: CoreV1Api;
  readonly server: string;

  constructor(kc: KubeConfig) {
    this.batch = kc.makeApiClient(BatchV1Api);
    this.core = kc.makeApiClient(CoreV1Api);
    this.server = kc.getCurrentCluster()?.server ?? '(no cluster in the kubeconfig)';
  }

  /** The Job, or undefined when the API server has none by that name (404). */
  async readJob(namespace: string, name: string): Promise<V1Job | undefined> {
    try {
      return await this.batch.readNamespacedJob({ namespace, name });
    } catch (e) {
      const err = this.wrap(`get job ${namespace}/${name}`, e);
      if (err.code === 404) return undefined;
      throw err;
    }
  }

  /** Creates the Job; `exists` when one by that name is already there (409 AlreadyExists). */
  async createJob(namespace: string, body: V1Job): Promise<'created' | 'exists'> {
    try {
      await this.batch.createNamespacedJob({ namespace, body });
      return 'created';
    } catch (e) {
      const err = this.wrap(`create job ${namespace}/${body.metadata?.name}`, e);
      if (err.code === 409) return 'exists';
      throw err;
    }
  }

  /** Deletes the Job with its pods (`Foreground`: the Job stays until its pods are gone); false when it was not there. */
  async deleteJob(namespace: string, name: string, propagationPolicy: 'Foreground' | 'Background'): Promise<boolean> {
    try {
      await this.batch.deleteNamespacedJob({ namespace, name, propagationPolicy });
      return true;
    } catch (e) {
      const err = this.wrap(`delete job ${namespace}/${name}`, e);
      if (err.code === 404) return false;
      throw err;
    }
  }

  async listPods(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    try {
      return (await this.core.listNamespacedPod({ namespace, labelSelector })).items;
    } catch (e) {
      throw this.wrap(`list pods ${namespace} -l ${labelSelector}`, e);
    }
  }

  /** The last `tailLines` lines the pod's container wrote (stdout and stderr together, as Kubernetes keeps them). */
  async podLog(namespace: string, name: string, container: string, tailLines: number): Promise<string> {
    try {
      return String(await this.core.readNamespacedPodLog({ namespace, name, container, tailLines }));
    } catch (e) {
      const err = this.wrap(`read log of pod ${namespace}/${name}`, e);
      if (err.code === 404 || err.code === 400) return '';
      throw err;
    }
  }

  private wrap(call: string, e: unknown): KubeApiError {
    if (e instanceof KubeApiError) return e;
    if (e instanceof ApiException) {
      const status = parseStatus((e as ApiException<unknown>).body);
      const msg = status?.message ? `${e.code} ${status.reason ?? ''}: ${status.message}` : `HTTP ${e.code}`;
      return new KubeApiError(call, this.server, oneLine(msg), e.code, status?.reason);
    }
    // node-fetch's FetchError carries the socket error (ECONNREFUSED, ENOTFOUND) in `code`.
    const err = e as Error & { code?: string };
    const why =
      err.code === 'ECONNREFUSED'
        ? 'connection refused (is the API server up, and is KUBECONFIG right?)'
        : oneLine(err.message ?? String(e));
    return new KubeApiError(call, this.server, why);
  }
}

function parseStatus(body: unknown): { reason?: string; message?: string } | undefined {
  try {
    const o = typeof body === 'string' ? JSON.parse(body) : body;
    return o && typeof o === 'object' ? (o as { reason?: string; message?: string }) : undefined;
  } catch {
    return typeof body === 'string' && body.trim() !== '' ? { message: body } : undefined;
  }
}

const oneLine = (s: string) => s.replace(/\s*\n\s*/g, '; ').trim();
