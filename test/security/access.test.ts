// Access rules of Flywheel's servers: every write (and the codec) needs the token when one is set, everything binds
// to loopback unless told otherwise, and a non-loopback bind without a token is refused.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { DbHandle } from '../../db/client';
import { startFeedbackServer, type FeedbackServer } from '../../server/feedback-server';
import { startCodecServer, type CodecServer } from '../../server/codec-server';
import { AesGcmPayloadCodec, parsePayloadKeys } from '../../temporal/payload-codec';
import { runCli } from '../helpers/cli';
import { freshDatabase, pgServerUrl, temporalAddress } from '../helpers/env';

const TOKEN = `tok-${crypto.randomBytes(8).toString('hex')}`;
const PAYLOAD_KEY = `k1:${crypto.randomBytes(32).toString('base64')}`;
let db: DbHandle;
let feedback: FeedbackServer;
let codec: CodecServer;

beforeAll(async () => {
  db = (await freshDatabase('access')).handle;
  // The feedback API refuses events for a campaign that does not exist.
  await db.pool.query(`INSERT INTO campaigns (id, spec, spec_hash) VALUES ('c', '{}', 'x')`);
  feedback = await startFeedbackServer({ db: db.db, port: 0, token: TOKEN });
  codec = await startCodecServer({ codec: new AesGcmPayloadCodec(parsePayloadKeys(PAYLOAD_KEY)), port: 0, token: TOKEN });
});

afterAll(async () => {
  await feedback?.close();
  await codec?.close();
  await db?.close();
});

const event = { id: 'evt-access', campaignId: 'c', kind: 'accept', modelVersion: 'm', prompt: 'p', output: 'o' };
const writes: [string, () => string, unknown][] = [
  ['POST /v1/feedback', () => `${feedback.url}/v1/feedback`, event],
  ['POST /v1/feedback:batch', () => `${feedback.url}/v1/feedback:batch`, { events: [event] }],
  ['POST /v1/complete', () => `${feedback.url}/v1/complete`, { campaignId: 'c', prompt: 'p' }],
  ['POST /encode', () => `${codec.url}/encode`, { payloads: [] }],
  ['POST /decode', () => `${codec.url}/decode`, { payloads: [] }],
];

test.each(writes)('%s refuses a request without the token or with a wrong one, and stores nothing', async (_name, url, body) => {
  for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, `Basic ${TOKEN}`]) {
    const r = await fetch(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    });
    expect(r.status).toBe(401);
    expect(await r.text()).not.toContain(TOKEN);
  }
  const rows = await db.pool.query('SELECT count(*)::int AS n FROM feedback_events');
  expect(rows.rows[0].n).toBe(0);
});

test('with the token, the same requests get through', async () => {
  const r = await fetch(`${codec.url}/encode`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ payloads: [{ metadata: {}, data: '' }] }),
  });
  expect(r.status).toBe(200);
  const f = await fetch(`${feedback.url}/v1/feedback`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(event),
  });
  expect(f.status).toBe(201);
});

test('the HTTP servers bind 127.0.0.1 by default', () => {
  expect(new URL(feedback.url).hostname).toBe('127.0.0.1');
  expect(new URL(codec.url).hostname).toBe('127.0.0.1');
});

/** Local addresses listening on `port` (from /proc/net/tcp and tcp6). */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').trim().split('\n').slice(1) : []))
    .map((l) => l.trim().split(/\s+/))
    .filter((cols) => cols[3] === '0A' && cols[1].endsWith(`:${hexPort}`))
    .map((cols) => cols[1].split(':')[0]);
}

test('the Temporal dev server and the embedded PostgreSQL listen on loopback only', () => {
  const temporalPort = Number(temporalAddress().split(':').pop());
  const pgPort = Number(new URL(pgServerUrl()).port);
  for (const port of [temporalPort, pgPort]) {
    const addrs = listeners(port);
    expect(addrs.length).toBeGreaterThan(0);
    // 0100007F is 127.0.0.1 in /proc's little-endian hex; nothing on 0.0.0.0 or ::
    expect(addrs.every((a) => a === '0100007F')).toBe(true);
  }
});

test.each(['serve', 'codec-server'])('flywheel %s --host 0.0.0.0 without FLYWHEEL_API_TOKEN is refused with exit 2', async (command) => {
  const env = { ...process.env, FLYWHEEL_API_TOKEN: '', FLYWHEEL_PAYLOAD_KEY: PAYLOAD_KEY, DATABASE_URL: pgServerUrl() };
  const r = await runCli(env, [command, '--host', '0.0.0.0', '--port', '0'], 60_000);
  expect(r.status).toBe(2);
  expect(r.stderr.trim()).toMatch(/^.*refusing to serve on 0\.0\.0\.0 without FLYWHEEL_API_TOKEN/);
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
});

test('flywheel codec-server without FLYWHEEL_PAYLOAD_KEY says so and exits 2', async () => {
  const r = await runCli({ ...process.env, FLYWHEEL_PAYLOAD_KEY: '' }, ['codec-server', '--port', '0'], 60_000);
  expect(r.status).toBe(2);
  expect(r.stderr).toMatch(/FLYWHEEL_PAYLOAD_KEY is not set/);
});
