// A small client for Ray's Jobs HTTP API (served by the head's dashboard, port 8265): submit, look up, stop and read
// the logs of a job by its submission id. Plain node:http, no Ray SDK: the training worker needs no Python.
import http from 'node:http';
import https from 'node:https';
import { FlywheelError } from '../../core/errors';

export const DEFAULT_RAY_ADDRESS = 'http://127.0.0.1:8265';

/** Ray's job states: PENDING and RUNNING will still run; the other three are final. */
export type RayJobStatus = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';

export const ACTIVE_RAY_STATES: ReadonlySet<string> = new Set(['PENDING', 'RUNNING']);

/** What `GET /api/jobs/{id}` says about a job (the fields the backend reads). */
export interface RayJobInfo {
  submission_id: string;
  status: RayJobStatus;
  entrypoint: string;
  /** Ray's explanation of the status, e.g. why a job failed. */
  message?: string | null;
  /** The driver's exit code, when Ray knows it. */
  driver_exit_code?: number | null;
  metadata?: Record<string, string> | null;
  start_time?: number | null;
  end_time?: number | null;
}

export interface RaySubmitRequest {
  entrypoint: string;
  submission_id: string;
  runtime_env?: Record<string, unknown>;
  entrypoint_num_cpus?: number;
  entrypoint_num_gpus?: number;
  metadata?: Record<string, string>;
}

export interface RayJobsClientOptions {
  /** The Jobs API's base URL (the dashboard). @default process.env.RAY_ADDRESS, else http://127.0.0.1:8265 */
  address?: string;
  /** Per-request limit, so a hung head fails the activity instead of blocking it. @default 30000 */
  timeoutMs?: number;
}

export class RayJobsError extends FlywheelError {
  constructor(
    message: string,
    readonly httpStatus?: number,
  ) {
    super(message);
  }
}

/** A submission id Ray already holds: the job a retried or racing launch must adopt, not a failure. */
export class RayJobExistsError extends RayJobsError {
  constructor(submissionId: string, httpStatus: number) {
    super(`ray jobs: a job with submission id ${submissionId} already exists`, httpStatus);
    this.name = 'RayJobExistsError';
  }
}

/** The address the options name, else RAY_ADDRESS, else the local head; `host:port` gets `http://`. */
export function resolveAddress(address?: string): string {
  const a = (address ?? process.env.RAY_ADDRESS ?? DEFAULT_RAY_ADDRESS).trim().replace(/\/+$/, '');
  return /^https?:\/\//.test(a) ? a : `http://${a}`;
}

export class RayJobsClient {
  readonly address: string;
  private readonly timeoutMs: number;

  constructor(opts: RayJobsClientOptions = {}) {
    this.address = resolveAddress(opts.address);
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** Submits a job; throws RayJobExistsError when the submission id is taken. Returns the submission id. */
  async submit(req: RaySubmitRequest): Promise<string> {
    const res = await this.request('POST', '/api/jobs/', req);
    const text = await res.text();
    if (res.ok) return (JSON.parse(text) as { submission_id: string }).submission_id;
    // Ray answers a taken id with its ValueError's traceback: HTTP 400 from the head, 500 when relayed by a job agent.
    if (/submission_id \S+ already exists/i.test(text)) throw new RayJobExistsError(req.submission_id, res.status);
    throw new RayJobsError(`ray jobs: submitting ${req.submission_id} failed (HTTP ${res.status}): ${lastLine(text)}`, res.status);
  }

  /** The job, or undefined when the head does not know it (never submitted, or a head that restarted). */
  async get(submissionId: string): Promise<RayJobInfo | undefined> {
    const res = await this.request('GET', `/api/jobs/${encodeURIComponent(submissionId)}`);
    const text = await res.text();
    if (res.status === 404) return undefined;
    if (!res.ok) throw new RayJobsError(`ray jobs: looking up ${submissionId} failed (HTTP ${res.status}): ${lastLine(text)}`, res.status);
    return JSON.parse(text) as RayJobInfo;
  }

  /** Asks Ray to stop the job (SIGTERM to its processes, SIGKILL after RAY_JOB_STOP_WAIT_TIME_S); false if it had ended. */
  async stop(submissionId: string): Promise<boolean> {
    const res = await this.request('POST', `/api/jobs/${encodeURIComponent(submissionId)}/stop`);
    const text = await res.text();
    if (!res.ok) throw new RayJobsError(`ray jobs: stopping ${submissionId} failed (HTTP ${res.status}): ${lastLine(text)}`, res.status);
    return (JSON.parse(text) as { stopped: boolean }).stopped;
  }

  /** The driver's output as Ray captured it ('' when the head does not know the job). */
  async logs(submissionId: string): Promise<string> {
    const res = await this.request('GET', `/api/jobs/${encodeURIComponent(submissionId)}/logs`);
    const text = await res.text();
    if (res.status === 404) return '';
    if (!res.ok)
      throw new RayJobsError(`ray jobs: reading the logs of ${submissionId} failed (HTTP ${res.status}): ${lastLine(text)}`, res.status);
    return (JSON.parse(text) as { logs: string }).logs ?? '';
  }

  /** Ray's version, or a RayJobsError that says how to start a head. */
  async version(): Promise<{ ray_version: string }> {
    const res = await this.request('GET', '/api/version');
    if (!res.ok) throw new RayJobsError(`ray jobs: ${this.address}/api/version answered HTTP ${res.status}`, res.status);
    return JSON.parse(await res.text()) as { ray_version: string };
  }

  private async request(method: string, route: string, body?: unknown): Promise<HttpReply> {
    try {
      return await httpRequest(`${this.address}${route}`, method, body === undefined ? undefined : JSON.stringify(body), this.timeoutMs);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new RayJobsError(
        `ray jobs: no Ray Jobs API answers at ${this.address} (${method} ${route}: ${err.code ?? err.message}); start a Ray head with its ` +
          `dashboard (on a test machine: bash .ci/start-ray.sh) or point RAY_ADDRESS / backend.ray.address at one`,
      );
    }
  }
}

interface HttpReply {
  status: number;
  ok: boolean;
  text(): Promise<string>;
}

/**
 * One HTTP exchange with node:http, not fetch: Node's fetch always sends `Sec-Fetch-Mode`, and Ray's dashboard
 * refuses POSTs from anything that looks like a browser (HTTP 405 "method not allowed for browser traffic").
 */
function httpRequest(url: string, method: string, body: string | undefined, timeoutMs: number): Promise<HttpReply> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      u,
      {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = res.statusCode ?? 0;
          resolve({ status, ok: status >= 200 && status < 300, text: async () => text });
        });
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

/** Ray answers errors with a Python traceback: its last line says what went wrong. */
function lastLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /\w/.test(l));
  return (lines[lines.length - 1] ?? '').slice(0, 500);
}
