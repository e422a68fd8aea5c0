// The feedback API (`flywheel serve`): how user signals reach the outer loop, and the production model they judge
// (`POST /v1/complete`, see completion-service.ts). Plain node:http, JSON in and out; writes are idempotent by the
// client's event id, so a client may retry any request that did not answer.
import http from 'node:http';
import { listenHttp } from './http/listen-http';
import { drained, InvalidUtf8BodyError, readBody, RequestAbortedError } from './http/http-body';
import { checkCompletionRequest } from '../core/completion';
import { checkFeedback, type FeedbackEvent } from '../core/feedback';
import type { Db } from '../db/client';
import { pingDatabase } from '../services/ping-database';
import {
  ConflictingCopiesError,
  DatabaseUnavailableError,
  FeedbackConflictError,
  isUnavailable,
  storeFeedback,
  UnknownCampaignError,
} from '../services/feedback-store';
import { bearerCheck } from './http/bearer-token';
import {
  CampaignNotFoundError,
  CompletionService,
  NoProductionModelError,
  UnsupportedCheckpointFormatError,
  type CompletionServiceOptions,
} from './completion-service';
import { InferenceStartError, UnservableCheckpointError } from './hf/inference-process';
import { PoolClosedError } from './hf/hf-model-pool';
import { NonRetryableError } from '../core/errors';

export interface FeedbackServerOptions {
  db: Db;
  /** 0 picks a free port (see `url`). */
  port: number;
  /** Loopback unless asked: the API is open to anyone who can reach it when no token is set. @default "127.0.0.1" */
  host?: string;
  /**
   * Writes and completions need `Authorization: Bearer <token>` when set (FLYWHEEL_API_TOKEN). Completions are reads,
   * but each costs up to 4096 forward passes of CPU and hands out the production model's outputs, so they are
   * guarded like writes; `/healthz` stays open. @default none: everything is open
   */
  token?: string;
  /** Largest request body accepted. @default 8 MiB */
  maxBodyBytes?: number;
  /** Largest batch accepted. @default 1000 */
  maxBatch?: number;
  /** Decoded production checkpoints kept in memory for `/v1/complete`. @default 4 */
  maxCachedModels?: number;
  /** How Hugging Face production checkpoints are served (completion-service.ts). @default none: they are answered 501 */
  hf?: CompletionServiceOptions['hf'];
}

export interface FeedbackServer {
  url: string;
  /** Stops listening, then stops the inference processes. */
  close(): Promise<void>;
  /** The completion service, for its inference processes (`completions.hf?.processes()`). */
  completions: CompletionService;
}

/** An answer: status and JSON body. */
type Reply = [status: number, body: Record<string, unknown>, headers?: Record<string, string>];

const bad = (error: string, problems: string[]): Reply => [400, { error, problems }];

export async function startFeedbackServer(opts: FeedbackServerOptions): Promise<FeedbackServer> {
  const o = { host: '127.0.0.1', maxBodyBytes: 8 << 20, maxBatch: 1000, ...opts };
  const authorized = bearerCheck(o.token);

  const completions = new CompletionService({ db: o.db, maxCachedModels: o.maxCachedModels, hf: o.hf });
  // `guarded`: needs the token when one is set; a POST's body is read and parsed before `handle`.
  const routes: Record<string, { method: 'GET' | 'POST'; guarded: boolean; handle: (body: unknown) => Promise<Reply> }> = {
    '/healthz': { method: 'GET', guarded: false, handle: () => health(o.db) },
    '/v1/feedback': { method: 'POST', guarded: true, handle: (body) => store(o.db, one(body)) },
    '/v1/feedback:batch': { method: 'POST', guarded: true, handle: (body) => store(o.db, batch(body, o.maxBatch)) },
    '/v1/complete': { method: 'POST', guarded: true, handle: (body) => complete(completions, body) },
  };

  const server = http.createServer((req, res) => {
    void answer(req).then(([status, body, headers]) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
      res.end(JSON.stringify(body) + '\n');
    });
  });

  async function answer(req: http.IncomingMessage): Promise<Reply> {
    try {
      const route = routes[(req.url ?? '/').split('?')[0]];
      if (!route) return drained(req, [404, { error: `no such endpoint: ${req.method} ${(req.url ?? '').split('?')[0]}` }]);
      if (req.method !== route.method)
        return drained(req, [405, { error: `${req.method} is not allowed here; use ${route.method}` }, { allow: route.method }]);
      if (route.guarded && !authorized(req))
        return drained(req, [
          401,
          { error: 'missing or wrong bearer token (Authorization: Bearer <FLYWHEEL_API_TOKEN>)' },
          { 'www-authenticate': 'Bearer' },
        ]);
      if (route.method === 'GET') return await route.handle(undefined);
      const raw = await readBody(req, o.maxBodyBytes, { strictUtf8: true });
      if (raw === undefined) return [413, { error: `request body larger than ${o.maxBodyBytes} bytes` }, { connection: 'close' }];
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch (e) {
        return bad('malformed JSON', [`(root): ${(e as Error).message}`]);
      }
      return await route.handle(body);
    } catch (e) {
      if (e instanceof Reject) return e.reply;
      if (e instanceof RequestAbortedError) return [400, { error: e.message }];
      if (e instanceof InvalidUtf8BodyError) return bad('malformed request', [`(root): ${e.message}`]);
      if (e instanceof FeedbackConflictError) return [409, { error: e.message, ids: e.ids }];
      if (e instanceof ConflictingCopiesError) return [400, { error: e.message, ids: e.ids }];
      if (e instanceof UnknownCampaignError) return [404, { error: e.message, campaigns: e.campaignIds }];
      const status = completionStatus(e);
      if (status) return [status, { error: (e as Error).message }];
      if (e instanceof InferenceStartError || e instanceof PoolClosedError) {
        // The one line is in the server's log already; paths stay there.
        return [503, { error: `the model is not available right now (${e.constructor.name}); retry later` }, { 'retry-after': '5' }];
      }
      if (e instanceof DatabaseUnavailableError || isUnavailable(e)) {
        const why = e instanceof DatabaseUnavailableError ? e.message : 'database unavailable';
        return [503, { error: `${why}; retry later` }, { 'retry-after': '5' }];
      }
      // The detail goes to the operator's log, not to the client.
      console.error(`flywheel serve: ${req.method} ${req.url}:`, e);
      return [500, { error: 'internal error (see the server log)' }];
    }
  }

  let listening;
  try {
    listening = await listenHttp(server, o.port, o.host);
  } catch (e) {
    await completions.close();
    throw e;
  }
  return {
    url: listening.url,
    completions,
    close: async () => {
      try {
        await listening.close();
      } finally {
        await completions.close();
      }
    },
  };
}

/** Thrown by request parsing to answer with `reply`. */
class Reject extends NonRetryableError {
  constructor(readonly reply: Reply) {
    super(String(reply[1].error));
  }
}

function one(body: unknown): FeedbackEvent[] {
  const r = checkFeedback(body);
  if (r.problems) throw new Reject(bad('invalid feedback event', r.problems));
  return [r.event];
}

/** Every event is checked before any is stored, and every problem is reported, so a client can fix a batch in one go. */
function batch(body: unknown, max: number): FeedbackEvent[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new Reject(bad('invalid batch', ['(root): expected an object { "events": [...] }']));
  const extra = Object.keys(body).filter((k) => k !== 'events');
  if (extra.length)
    throw new Reject(
      bad(
        'invalid batch',
        extra.map((k) => `${k}: unknown field`),
      ),
    );
  const events = (body as { events?: unknown }).events;
  if (!Array.isArray(events)) throw new Reject(bad('invalid batch', ['events: expected an array of feedback events']));
  if (events.length === 0 || events.length > max)
    throw new Reject(bad('invalid batch', [`events: must hold 1 to ${max} events (got ${events.length})`]));
  const problems: string[] = [];
  const ok = events.map((e, i) => {
    const r = checkFeedback(e, ['events', i]);
    if (r.problems) problems.push(...r.problems);
    return r.event!;
  });
  if (problems.length)
    throw new Reject(bad(`invalid batch: ${problems.length} problem${problems.length > 1 ? 's' : ''}, nothing stored`, problems));
  return ok;
}

async function store(db: Db, events: FeedbackEvent[]): Promise<Reply> {
  const r = await storeFeedback(db, events, { requireCampaign: true });
  return [r.inserted > 0 ? 201 : 200, { inserted: r.inserted, duplicates: r.duplicates }];
}

async function complete(service: CompletionService, body: unknown): Promise<Reply> {
  const r = checkCompletionRequest(body);
  if (r.problems) throw new Reject(bad('invalid completion request', r.problems));
  return [200, { ...(await service.complete(r.request)) }];
}

/** The status of a completion error the client can act on; undefined for anything else. */
function completionStatus(e: unknown): number | undefined {
  if (e instanceof CampaignNotFoundError) return 404;
  if (e instanceof NoProductionModelError) return 409;
  if (e instanceof UnsupportedCheckpointFormatError || e instanceof UnservableCheckpointError) return 501;
  return undefined;
}

async function health(db: Db): Promise<Reply> {
  try {
    await pingDatabase(db);
    return [200, { status: 'ok' }];
  } catch (e) {
    if (!isUnavailable(e)) throw e;
    return [503, { status: 'unavailable', error: 'database unavailable' }];
  }
}
