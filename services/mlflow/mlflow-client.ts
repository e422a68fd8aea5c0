// The few calls of MLflow's tracking REST API (`/api/2.0/mlflow/…`) that `flywheel export mlflow` makes: no MLflow
// package, plain fetch. An error answer is one line with MLflow's own message.
import { jsonBody } from '../json-body';
import { FlywheelError, UsageError } from '../../core/errors';

export interface MlflowTag {
  key: string;
  value: string;
}

export interface MlflowMetric {
  key: string;
  value: number;
  /** Milliseconds since the epoch. */
  timestamp: number;
  step: number;
}

export interface MlflowRunData {
  runId: string;
  tags: MlflowTag[];
  params: MlflowTag[];
  metrics: MlflowMetric[];
}

/** The tracking server answered with an error (or did not answer). */
export class MlflowRequestError extends FlywheelError {}

/** A tracking URI that is not an http(s) URL: MLflow's REST API is reached over HTTP. */
export class MlflowUriError extends UsageError {}

/** Per `runs/log-batch` request, as MLflow limits it. */
export const LOG_BATCH_LIMITS = { metrics: 1000, params: 100, tags: 100 } as const;

export function mlflowClient(trackingUri: string) {
  let base: URL;
  try {
    base = new URL(trackingUri);
  } catch {
    throw new MlflowUriError(`--tracking-uri: "${trackingUri}" is not a URL (an MLflow tracking server's, e.g. http://127.0.0.1:5000)`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw new MlflowUriError(`--tracking-uri: "${trackingUri}" is not an http(s) URL: only a tracking server's REST API is supported`);
  const root = trackingUri.replace(/\/+$/, '');

  async function call(method: 'GET' | 'POST', route: string, body?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const url = `${root}/api/2.0/mlflow/${route}`;
    let res: Response;
    try {
      res = await fetch(url, { method, headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
    } catch (e) {
      throw new MlflowRequestError(`MLflow at ${root} did not answer ${route}: ${(e as Error).message}`);
    }
    const { text, parsed } = await jsonBody(res);
    if (!res.ok) {
      const why = typeof parsed.message === 'string' ? parsed.message : text.slice(0, 200);
      const e = new MlflowRequestError(`MLflow ${route}: ${res.status} ${why}`);
      (e as MlflowRequestError & { code?: unknown }).code = parsed.error_code;
      throw e;
    }
    return parsed;
  }

  return {
    /** The experiment's id, creating it when no experiment has the name. */
    async experimentId(name: string): Promise<string> {
      try {
        const r = await call('GET', `experiments/get-by-name?experiment_name=${encodeURIComponent(name)}`);
        return (r.experiment as { experiment_id: string }).experiment_id;
      } catch (e) {
        if ((e as { code?: unknown }).code !== 'RESOURCE_DOES_NOT_EXIST') throw e;
      }
      return (await call('POST', 'experiments/create', { name })).experiment_id as string;
    },
    /** The runs of an experiment whose tag `key` is `value` (at most 2: one expected). */
    async runsTagged(experimentId: string, key: string, value: string): Promise<string[]> {
      const filter = `tags.\`${key}\` = '${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
      const r = await call('POST', 'runs/search', { experiment_ids: [experimentId], filter, max_results: 2 });
      return ((r.runs ?? []) as { info: { run_id: string } }[]).map((x) => x.info.run_id);
    },
    async createRun(experimentId: string, runName: string, startTime: number, tags: MlflowTag[]): Promise<string> {
      const r = await call('POST', 'runs/create', { experiment_id: experimentId, run_name: runName, start_time: startTime, tags });
      return (r.run as { info: { run_id: string } }).info.run_id;
    },
    /** Logs everything in as many batches as MLflow's limits take; re-logging a metric point or param unchanged is a no-op. */
    async logBatch(runId: string, data: { metrics: MlflowMetric[]; params: MlflowTag[]; tags: MlflowTag[] }): Promise<void> {
      const { metrics, params, tags } = data;
      const rounds = Math.max(
        1,
        Math.ceil(metrics.length / LOG_BATCH_LIMITS.metrics),
        Math.ceil(params.length / LOG_BATCH_LIMITS.params),
        Math.ceil(tags.length / LOG_BATCH_LIMITS.tags),
      );
      for (let i = 0; i < rounds; i++) {
        const slice = <T>(xs: T[], n: number) => xs.slice(i * n, (i + 1) * n);
        await call('POST', 'runs/log-batch', {
          run_id: runId,
          metrics: slice(metrics, LOG_BATCH_LIMITS.metrics),
          params: slice(params, LOG_BATCH_LIMITS.params),
          tags: slice(tags, LOG_BATCH_LIMITS.tags),
        });
      }
    },
    async updateRun(runId: string, status: string, endTime: number | undefined): Promise<void> {
      await call('POST', 'runs/update', { run_id: runId, status, ...(endTime !== undefined ? { end_time: endTime } : {}) });
    },
    /** Everything a run holds (for tests and checks): its tags, params and latest metrics. */
    async run(runId: string): Promise<MlflowRunData> {
      const r = (await call('GET', `runs/get?run_id=${encodeURIComponent(runId)}`)).run as {
        data: { tags?: MlflowTag[]; params?: MlflowTag[]; metrics?: MlflowMetric[] };
      };
      return { runId, tags: r.data.tags ?? [], params: r.data.params ?? [], metrics: r.data.metrics ?? [] };
    },
    async metricHistory(runId: string, key: string): Promise<MlflowMetric[]> {
      const r = await call('GET', `metrics/get-history?run_id=${encodeURIComponent(runId)}&metric_key=${encodeURIComponent(key)}`);
      return (r.metrics ?? []) as MlflowMetric[];
    },
  };
}

export type MlflowClient = ReturnType<typeof mlflowClient>;
