// The codec endpoint (`flywheel codec-server`): the Temporal UI and `temporal` CLI send encrypted payloads here (a
// failure's encoded message and stack trace among them) to show them decoded to an authorised user. It speaks the Temporal codec-server protocol: POST /encode and POST
// /decode with `{"payloads": [{"metadata": {k: base64}, "data": base64}]}`, answered in the same shape.
import http from 'node:http';
import { listenHttp } from './http/listen-http';
import { drained, readBody } from './http/http-body';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { bearerCheck } from './http/bearer-token';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** 0 picks a free port (see `url`). */
  port: number;
  /** @default "127.0.0.1" */
  host?: string;
  /** Both endpoints need `Authorization: Bearer <token>` when set (FLYWHEEL_API_TOKEN). @default none */
  token?: string;
  /** Browser origins allowed by CORS: the Temporal UI's. @default ["http://127.0.0.1:8233", "http://localhost:8233"] */
  origins?: string[];
  /** Largest request body accepted. @default 16 MiB */
  maxBodyBytes?: number;
}

export interface CodecServer {
  url: string;
  close(): Promise<void>;
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

type Reply = [status: number, body: unknown];

export async function startCodecServer(opts: CodecServerOptions): Promise<CodecServer> {
  const o = { host: '127.0.0.1', origins: ['http://127.0.0.1:8233', 'http://localhost:8233'], maxBodyBytes: 16 << 20, ...opts };
  const authorized = bearerCheck(o.token);
  const server = http.createServer((req, res) => {
    const origin = req.headers.origin;
    const cors: Record<string, string> =
      origin && o.origins.includes(origin)
        ? {
            'access-control-allow-origin': origin,
            'access-control-allow-methods': 'POST, OPTIONS',
            'access-control-allow-headers': 'Content-Type, X-Namespace, Authorization',
            'access-control-allow-credentials': 'true',
            vary: 'Origin',
          }
        : {};
    // The only rejection left is a client that went away mid-body: nobody reads the answer.
    void answer(req)
      .catch((e: Error): Reply => [400, { error: e.message }])
      .then(([status, body]) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...cors });
        res.end(body === undefined ? '' : JSON.stringify(body) + '\n');
      });
  });

  async function answer(req: http.IncomingMessage): Promise<Reply> {
    const path = (req.url ?? '/').split('?')[0];
    const op = path === '/encode' ? 'encode' : path === '/decode' ? 'decode' : undefined;
    // A preflight carries no credentials: it is answered (with CORS headers for a known origin) and does nothing.
    if (req.method === 'OPTIONS') return drained(req, [op ? 204 : 404, undefined]);
    if (!op) return drained(req, [404, { error: `no such endpoint: ${req.method} ${path} (POST /encode or /decode)` }]);
    if (req.method !== 'POST') return drained(req, [405, { error: `${req.method} is not allowed here; use POST` }]);
    if (!authorized(req))
      return drained(req, [401, { error: 'missing or wrong bearer token (Authorization: Bearer <FLYWHEEL_API_TOKEN>)' }]);
    const raw = await readBody(req, o.maxBodyBytes);
    if (raw === undefined) return [413, { error: `request body larger than ${o.maxBodyBytes} bytes` }];
    let payloads: Payload[];
    try {
      payloads = parsePayloads(JSON.parse(raw));
    } catch (e) {
      return [400, { error: `malformed codec request: ${(e as Error).message}` }];
    }
    try {
      const out = await o.codec[op](payloads);
      return [200, { payloads: out.map(toJson) }];
    } catch (e) {
      // A payload no key opens: say so, without echoing it.
      return [400, { error: (e as Error).message }];
    }
  }

  return listenHttp(server, o.port, o.host);
}

function parsePayloads(body: unknown): Payload[] {
  const list = (body as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(list)) throw new Error('payloads: expected an array');
  return list.map((p: JsonPayload, i) => {
    if (typeof p !== 'object' || p === null) throw new Error(`payloads.${i}: expected an object`);
    const metadata: Record<string, Uint8Array> = {};
    for (const [k, v] of Object.entries(p.metadata ?? {})) {
      if (typeof v !== 'string') throw new Error(`payloads.${i}.metadata.${k}: expected base64 text`);
      metadata[k] = Buffer.from(v, 'base64');
    }
    if (p.data !== undefined && typeof p.data !== 'string') throw new Error(`payloads.${i}.data: expected base64 text`);
    return { metadata, data: Buffer.from(p.data ?? '', 'base64') };
  });
}

function toJson(p: Payload): JsonPayload {
  return {
    metadata: Object.fromEntries(Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v ?? []).toString('base64')])),
    data: Buffer.from(p.data ?? []).toString('base64'),
  };
}
