// The feedback API as a client sees it: a real server on 127.0.0.1 over a fresh database, driven with fetch.
import { sql } from 'drizzle-orm';
import type { DbHandle } from '../../db/client';
import { openDb } from '../../db/client';
import { campaigns, feedbackEvents } from '../../db/schema';
import type { CampaignSpec } from '../../core/spec';
import { startFeedbackServer, type FeedbackServer } from '../../server/feedback-server';
import { freshDatabase } from '../helpers/env';
import { freePort } from '../helpers/ports';

const TOKEN = 'test-token-9f2c';
let db: DbHandle;
let server: FeedbackServer;

beforeAll(async () => {
  ({ handle: db } = await freshDatabase('feedback_api'));
  await db.db.insert(campaigns).values({ id: 'c1', spec: {} as CampaignSpec, specHash: 'x' });
  server = await startFeedbackServer({ db: db.db, port: await freePort(), token: TOKEN });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
});
beforeEach(async () => {
  await db.db.delete(feedbackEvents);
});

let seq = 0;
function event(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: `evt-${++seq}`, campaignId: 'c1', kind: 'accept', modelVersion: 'ckpt-1', prompt: 'def add(', output: 'a, b):', ...over };
}

async function post(path: string, body: unknown, token: string | null = TOKEN): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function rowCount(): Promise<number> {
  const [{ n }] = await db.db.select({ n: sql<number>`count(*)::int` }).from(feedbackEvents);
  return n;
}

test('a valid event is stored once; the same event retried stores nothing more', async () => {
  const e = event({ kind: 'edit', correction: 'a: int, b: int):', rating: 4, comment: 'types please', category: 'python' });
  expect(await post('/v1/feedback', e)).toEqual({ status: 201, body: { inserted: 1, duplicates: 0 } });
  expect(await post('/v1/feedback', e)).toEqual({ status: 200, body: { inserted: 0, duplicates: 1 } });
  const rows = await db.db.select().from(feedbackEvents);
  expect(rows).toHaveLength(1);
  expect(rows[0]).toMatchObject({
    id: e.id,
    kind: 'edit',
    correction: 'a: int, b: int):',
    rating: 4,
    comment: 'types please',
    category: 'python',
  });
});

test.each([
  ['bad JSON', '{"id": "x",', '(root): '],
  ['an unknown kind', event({ kind: 'love' }), 'kind: '],
  ['a rating out of range', event({ kind: 'rating', rating: 6 }), 'rating: must be an integer from 1 to 5'],
  ['a fractional rating', event({ kind: 'rating', rating: 2.5 }), 'rating: must be an integer from 1 to 5'],
  ['a rating event without a rating', event({ kind: 'rating' }), 'rating: required when kind is "rating"'],
  ['an edit without a correction', event({ kind: 'edit' }), 'correction: required when kind is "edit"'],
  ['a correction on an accept', event({ correction: 'x' }), 'correction: only allowed when kind is "edit"'],
  ['an unknown field', event({ createdAt: '2024-01-01' }), 'createdAt: unknown field'],
  ['a bad id', event({ id: 'has space' }), 'id: '],
  ['a bad category', event({ category: 'two words' }), 'category: letters, digits and ._:/- only'],
  ['a NUL character', event({ output: 'a\u0000b' }), 'output: '],
  ['an oversized prompt', event({ prompt: 'x'.repeat(64 * 1024 + 1) }), 'prompt: must be at most 65536 bytes'],
])('%s is refused with 400 and its path, and no row is written', async (_label, body, problem) => {
  const r = await post('/v1/feedback', body);
  expect(r.status).toBe(400);
  expect(typeof r.body.error).toBe('string');
  expect((r.body.problems as string[]).some((p) => p.startsWith(problem))).toBe(true);
  expect(await rowCount()).toBe(0);
});

test('a batch is stored whole, and one bad event in it writes nothing (its path names the event)', async () => {
  const good = [event(), event({ kind: 'reject' }), event({ kind: 'rating', rating: 1 })];
  const bad = [...good.slice(0, 3), event(), event({ kind: 'rating', rating: 0 })];
  const r = await post('/v1/feedback:batch', { events: bad.map((e, i) => (i < 3 ? { ...e, id: `${e.id}-b` } : e)) });
  expect(r.status).toBe(400);
  expect(r.body.problems).toEqual(['events.4.rating: must be an integer from 1 to 5']);
  expect(await rowCount()).toBe(0);
  expect(await post('/v1/feedback:batch', { events: good })).toEqual({ status: 201, body: { inserted: 3, duplicates: 0 } });
  // A retried batch, and one that only partly overlaps: the known ids count as duplicates.
  expect(await post('/v1/feedback:batch', { events: good })).toEqual({ status: 200, body: { inserted: 0, duplicates: 3 } });
  expect(await post('/v1/feedback:batch', { events: [good[0], event()] })).toEqual({ status: 201, body: { inserted: 1, duplicates: 1 } });
  expect(await rowCount()).toBe(4);
});

test('batch envelopes that are not { events: [1..1000] } are refused', async () => {
  expect((await post('/v1/feedback:batch', [event()])).status).toBe(400);
  expect((await post('/v1/feedback:batch', { events: [] })).body.problems).toEqual(['events: must hold 1 to 1000 events (got 0)']);
  const tooMany = Array.from({ length: 1001 }, () => event());
  expect((await post('/v1/feedback:batch', { events: tooMany })).status).toBe(400);
  expect((await post('/v1/feedback:batch', { events: [event()], extra: 1 })).body.problems).toEqual(['extra: unknown field']);
  expect(await rowCount()).toBe(0);
});

test('the same id with different content is a 409 and changes nothing, alone or inside a batch', async () => {
  const e = event();
  expect((await post('/v1/feedback', e)).status).toBe(201);
  const r = await post('/v1/feedback', { ...e, output: 'something else' });
  expect(r.status).toBe(409);
  expect(r.body.ids).toEqual([e.id]);
  const fresh = event();
  expect((await post('/v1/feedback:batch', { events: [fresh, { ...e, kind: 'reject' }] })).status).toBe(409);
  // Two copies of one id that disagree within a single batch: the request contradicts itself (400), and it does
  // not claim that anything was stored.
  const twice = await post('/v1/feedback:batch', { events: [fresh, { ...fresh, prompt: 'other' }] });
  expect(twice.status).toBe(400);
  expect(twice.body.error).toBe(`feedback id "${fresh.id}" appears twice in the batch with different content; nothing stored`);
  const rows = await db.db.select().from(feedbackEvents);
  expect(rows.map((x) => [x.id, x.output, x.kind])).toEqual([[e.id, e.output, 'accept']]);
});

test('feedback for a campaign that does not exist is a 404 and stores nothing, alone or inside a batch', async () => {
  const r = await post('/v1/feedback', event({ campaignId: 'no-such-campaign' }));
  expect(r.status).toBe(404);
  expect(r.body.error).toMatch(/^no campaign "no-such-campaign": register it first/);
  expect((await post('/v1/feedback:batch', { events: [event(), event({ campaignId: 'c9' })] })).status).toBe(404);
  expect(await rowCount()).toBe(0);
});

test('a body that is not valid UTF-8 is refused with the offset of its first bad byte, not stored with U+FFFD', async () => {
  const json = Buffer.from(JSON.stringify(event({ output: 'caf\u00e9' })));
  const at = json.indexOf(Buffer.from('caf')) + 3;
  // "é" as a lone Latin-1 byte (0xE9) followed by a quote: no valid UTF-8 sequence.
  const bytes = Buffer.concat([json.subarray(0, at), Buffer.from([0xe9]), json.subarray(at + 2)]);
  const res = await fetch(`${server.url}/v1/feedback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: bytes,
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { problems: string[] }).problems).toEqual([
    `(root): request body is not valid UTF-8 (first bad byte at offset ${at})`,
  ]);
  expect(await rowCount()).toBe(0);
});

test('writes need the bearer token: missing or wrong is 401, and the token is never echoed', async () => {
  for (const token of [null, 'wrong', `${TOKEN}x`, '']) {
    const r = await post('/v1/feedback', event(), token);
    expect(r.status).toBe(401);
    expect(JSON.stringify(r.body)).not.toContain(TOKEN);
  }
  const basic = await fetch(`${server.url}/v1/feedback`, {
    method: 'POST',
    headers: { authorization: `Basic ${TOKEN}` },
    body: JSON.stringify(event()),
  });
  expect(basic.status).toBe(401);
  expect(await rowCount()).toBe(0);
});

test('50 parallel POSTs of 10 distinct ids (5 copies each) store exactly 10 rows', async () => {
  const events = Array.from({ length: 10 }, () => event());
  const posts = Array.from({ length: 50 }, (_, i) => post('/v1/feedback', events[i % 10]));
  const results = await Promise.all(posts);
  expect(results.every((r) => r.status === 201 || r.status === 200)).toBe(true);
  expect(results.reduce((n, r) => n + (r.body.inserted as number), 0)).toBe(10);
  expect(results.reduce((n, r) => n + (r.body.duplicates as number), 0)).toBe(40);
  expect(await rowCount()).toBe(10);
});

test('overlapping batches sent in parallel neither deadlock nor duplicate', async () => {
  const events = Array.from({ length: 40 }, () => event());
  const batches = Array.from({ length: 8 }, (_, i) => ({ events: (i % 2 ? [...events].reverse() : events).slice(0, 30 + i) }));
  const results = await Promise.all(batches.map((b) => post('/v1/feedback:batch', b)));
  expect(results.map((r) => r.status).every((s) => s === 200 || s === 201)).toBe(true);
  // Even batches take the first 30+ ids, odd ones the last 31+: together all 40.
  expect(await rowCount()).toBe(40);
});

test('other paths and methods: 404, 405; oversized body: 413; healthz', async () => {
  expect((await fetch(`${server.url}/v1/nothing`, { method: 'POST', body: '{}' })).status).toBe(404);
  const get = await fetch(`${server.url}/v1/feedback`);
  expect(get.status).toBe(405);
  expect(get.headers.get('allow')).toBe('POST');
  expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok' });
  const big = await post('/v1/feedback:batch', `{"events":["${'x'.repeat(9 << 20)}"]}`);
  expect(big.status).toBe(413);
  // The connection pool still works after the 413.
  expect((await post('/v1/feedback', event())).status).toBe(201);
});

test('an unreachable database is a 503 with a clear message', async () => {
  const port = await freePort(); // nothing listens there
  const dead = openDb(`postgres://postgres:pw@127.0.0.1:${port}/none`, { max: 1 });
  const s = await startFeedbackServer({ db: dead.db, port: await freePort() });
  try {
    const res = await fetch(`${s.url}/v1/feedback`, { method: 'POST', body: JSON.stringify(event()) });
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: string };
    expect(body.error).toMatch(/database unavailable/);
    expect(body.error).not.toContain('pw');
    expect((await fetch(`${s.url}/healthz`)).status).toBe(503);
  } finally {
    await s.close();
    await dead.close();
  }
});
