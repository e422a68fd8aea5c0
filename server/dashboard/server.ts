// The dashboard's HTTP server (`flywheel up`, `flywheel serve`): read-only pages over PostgreSQL, actions mapped onto
// workflow signals and updates, behind the API token when one is set. Every failure is a page with one clear
// message: an unknown id is a 404, a database that is down a 503, never a stack trace.
import crypto from 'node:crypto';
import http from 'node:http';
import { listenHttp } from '../http/listen-http';
import { readBody } from '../http/http-body';
import { isUnavailable } from '../../services/feedback-store';
import type { Db } from '../../db/client';
import { BadRequestError, makeContext, NotFoundError, type DashboardContext, type DashboardTemporal } from './context';
import { html, message, page } from './html';
import { confirmPage, runAction } from './pages/action-pages';
import { campaignPage } from './pages/campaign-page';
import { campaignsPage } from './pages/campaigns-page';
import { comparePage } from './pages/compare-page';
import { asset } from './assets';
import { experimentCharts, experimentCurves, experimentPage } from './pages/experiment-page';
import { loopCharts, loopCurvesFragment, loopPage } from './pages/loop-page';

export interface DashboardOptions {
  db: Db;
  /** Live workflow state, Temporal UI links and actions; without it the pages are read-only views of the database. */
  temporal?: DashboardTemporal;
  /** 0 picks a free port (see `url`). */
  port: number;
  /** @default "127.0.0.1" */
  host?: string;
  /** When set, every page needs it (FLYWHEEL_API_TOKEN): a Bearer header, or `?token=` once, which sets a cookie. @default none */
  token?: string;
}

export interface DashboardServer {
  url: string;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  body: string;
  type?: string;
  headers?: Record<string, string>;
}

const COOKIE = 'flywheel_token';
const MAX_FORM = 64 << 10;

export async function startDashboard(opts: DashboardOptions): Promise<DashboardServer> {
  const host = opts.host ?? '127.0.0.1';
  const tokenDigest = opts.token ? sha256(opts.token) : undefined;
  // The CSRF field is derived from the token (stable across restarts), or random per process when there is none.
  const csrf = crypto
    .createHmac('sha256', opts.token ?? crypto.randomBytes(32))
    .update('flywheel-dashboard-csrf')
    .digest('hex')
    .slice(0, 32);
  const ctx = makeContext(opts.db, csrf, opts.temporal);

  const server = http.createServer((req, res) => {
    void answer(ctx, req, tokenDigest).then((r) => {
      res.writeHead(r.status, {
        'content-type': r.type ?? 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'x-frame-options': 'DENY',
        ...r.headers,
      });
      res.end(r.body);
    });
  });
  return listenHttp(server, opts.port, host);
}

async function answer(ctx: DashboardContext, req: http.IncomingMessage, tokenDigest: Buffer | undefined): Promise<Reply> {
  const url = new URL(req.url ?? '/', 'http://dashboard');
  try {
    if (tokenDigest) {
      const given = url.searchParams.get('token');
      if (given !== null) {
        // A link with the token logs the browser in, then drops the token from the address bar and history.
        if (!same(given, tokenDigest)) return unauthorized('wrong token');
        url.searchParams.delete('token');
        return {
          status: 303,
          body: '',
          headers: {
            location: url.pathname + url.search,
            'set-cookie': `${COOKIE}=${encodeURIComponent(given)}; HttpOnly; SameSite=Strict; Path=/`,
          },
        };
      }
      if (!authorized(req, tokenDigest)) return unauthorized();
    }
    if (req.method === 'POST') return await post(ctx, req, url);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return {
        status: 405,
        body: page('Not allowed', message(`${req.method} is not allowed here`, 'error')),
        headers: { allow: 'GET, POST' },
      };
    return await get(ctx, url);
  } catch (e) {
    return failure(e, req);
  }
}

/** Routes: `/`, `/compare?a=&b=`, `/campaigns/ID`, `/loops/ID`, `/loops/ID/charts.json`, `/loops/ID/curves.svg`, `/experiments/ID` (and its charts.json, curves.svg), `/actions/NAME`, `/assets/NAME`. */
async function get(ctx: DashboardContext, url: URL): Promise<Reply> {
  const [, kind, rawId, extra, ...more] = url.pathname.split('/');
  const id = rawId === undefined ? undefined : decode(rawId);
  const ok = (body: string): Reply => ({ status: 200, body });
  if (url.pathname === '/') return ok(await campaignsPage(ctx, url));
  if (url.pathname === '/compare') return ok(await comparePage(ctx, url));
  if (url.pathname === '/healthz') return { status: 200, body: '{"status":"ok"}\n', type: 'application/json' };
  if (kind === 'assets' && id && !extra) {
    const a = asset(id);
    if (!a)
      throw new NotFoundError(
        id === 'echarts.min.js' ? 'the charting library is not installed (npm ci installs echarts)' : `no asset ${id}`,
      );
    return { status: 200, body: a.body, type: a.type, headers: { 'cache-control': 'max-age=3600' } };
  }
  if (id && !more.length) {
    if (kind === 'campaigns' && !extra) return ok(await campaignPage(ctx, url, id));
    if (kind === 'loops' && !extra) return ok(await loopPage(ctx, url, id));
    if (kind === 'experiments' && !extra) return ok(await experimentPage(ctx, url, id));
    if (kind === 'actions' && !extra) return ok(confirmPage(ctx, id, Object.fromEntries(url.searchParams)));
    if (extra === 'charts.json' && (kind === 'loops' || kind === 'experiments')) {
      const c = kind === 'loops' ? await loopCharts(ctx, url, id) : await experimentCharts(ctx, url, id);
      return { status: 200, body: JSON.stringify(c), type: 'application/json' };
    }
    if (extra === 'curves.svg' && (kind === 'loops' || kind === 'experiments')) {
      const c = kind === 'loops' ? await loopCurvesFragment(ctx, url, id) : await experimentCurves(ctx, id);
      return { status: 200, body: c.svg, type: 'image/svg+xml', headers: { 'x-flywheel-live': c.live ? '1' : '0' } };
    }
  }
  throw new NotFoundError(`no page at ${url.pathname}`);
}

async function post(ctx: DashboardContext, req: http.IncomingMessage, url: URL): Promise<Reply> {
  const m = /^\/actions\/([a-z-]+)$/.exec(url.pathname);
  if (!m) throw new NotFoundError(`nothing to POST at ${url.pathname}`);
  const form = new URLSearchParams(await readForm(req));
  const [status, body] = await runAction(ctx, m[1], Object.fromEntries(form));
  return { status, body };
}

function failure(e: unknown, req: http.IncomingMessage): Reply {
  if (e instanceof NotFoundError)
    return {
      status: 404,
      body: page('Not found', html`<h1>Not found</h1>${message(`${e.message}.`, 'error')}<p><a href="/">All campaigns</a></p>`),
    };
  if (e instanceof BadRequestError)
    return {
      status: e.status,
      body: page('Refused', html`<h1>Refused</h1>${message(e.message, 'error')}<p><a href="/">All campaigns</a></p>`),
    };
  if (isUnavailable(e)) {
    return {
      status: 503,
      body: page(
        'Database unavailable',
        html`<h1>Database unavailable</h1>${message('The dashboard cannot reach PostgreSQL right now; reload in a moment. (The server log has the detail.)', 'error')}`,
      ),
      headers: { 'retry-after': '5' },
    };
  }
  console.error(`flywheel dashboard: ${req.method} ${req.url}:`, e);
  return {
    status: 500,
    body: page('Error', html`<h1>Something went wrong</h1>${message('Internal error; the server log has the detail.', 'error')}`),
  };
}

function unauthorized(why = 'this dashboard needs the API token (FLYWHEEL_API_TOKEN)'): Reply {
  return {
    status: 401,
    body: page(
      'Token needed',
      html`<h1>Token needed</h1>${message(`${why}.`, 'error')}<form method="get"><label>Token <input type="password" name="token"></label> <button type="submit">Open</button></form>`,
    ),
    headers: { 'www-authenticate': 'Bearer' },
  };
}

function authorized(req: http.IncomingMessage, digest: Buffer): boolean {
  const bearer = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];
  if (bearer !== undefined) return same(bearer, digest);
  const cookie = (req.headers.cookie ?? '').split(/; */).find((c) => c.startsWith(`${COOKIE}=`));
  return cookie !== undefined && same(decode(cookie.slice(COOKIE.length + 1)), digest);
}

const same = (given: string, digest: Buffer): boolean => crypto.timingSafeEqual(sha256(given), digest);

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new BadRequestError(`malformed address: ${s}`);
  }
}

async function readForm(req: http.IncomingMessage): Promise<string> {
  const body = await readBody(req, MAX_FORM);
  if (body === undefined) throw new BadRequestError('form too large', 413);
  return body;
}

function sha256(s: string): Buffer {
  return crypto.createHash('sha256').update(s).digest();
}
