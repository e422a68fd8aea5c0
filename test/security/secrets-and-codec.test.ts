// A real run under `flywheel up` (workers as child processes, on the run's Temporal server and a PostgreSQL role with
// its own password) with FLYWHEEL_PAYLOAD_KEY set: the raw histories hold ciphertext only, failure messages and stack
// traces included, the codec endpoint decodes them for a caller with the token, and no configured secret appears in
// any history, log or CLI output.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ActivityFailure, ApplicationFailure, Client, Connection, WorkflowFailedError } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { Client as PgClient } from 'pg';
import { taskQueue } from '../../contracts/queues';
import type { CampaignSpecInput } from '../../core/spec';
import { flywheelDataConverter } from '../../temporal/data-converter';
import { AesGcmPayloadCodec, ENCRYPTED_ENCODING, parsePayloadKeys } from '../../temporal/payload-codec';
import { startCodecServer, type CodecServer } from '../../server/codec-server';
import { ensureDatabase } from '../../db/embedded-server';
import { applyMigrations } from '../../db/migrate';
import { openDb } from '../../db/client';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { findTemporalCli } from '../../stack/temporal-cli';
import { runCli, type CliResult } from '../helpers/cli';
import { pgServerUrl, scratchDir, temporalAddress } from '../helpers/env';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { spawnUp, stackEnv, type UpProcess } from '../stack/up-process';

const execFileAsync = promisify(execFile);
const secret = (label: string): string => `${label}-${crypto.randomBytes(12).toString('hex')}`;
const API_TOKEN = secret('tok');
const OPENAI_KEY = secret('sk');
const DB_PASSWORD = secret('pw');
const PAYLOAD_KEY = `k2:${crypto.randomBytes(32).toString('base64')}`;
const SECRETS = {
  FLYWHEEL_API_TOKEN: API_TOKEN,
  OPENAI_API_KEY: OPENAI_KEY,
  'database password': DB_PASSWORD,
  'payload key': PAYLOAD_KEY.slice(3),
};

const campaignId = uniqueName('secrets');
const workflowId = `${campaignId}/inner/1`;
/** A loop started on a campaign version whose (unknown) id carries a secret: an activity fails, its message naming it. */
const FAILURE_SECRET = secret('fail');
const badSpecLoop = `${uniqueName('secrets-badspec')}/inner/1`;
/** A loop whose untrained baseline crashes: the workflow code itself fails (BaselineFailed). */
const crashLoop = `${uniqueName('secrets-crash')}/inner/1`;
/** What a client with the key got from each failing loop. */
const failures = new Map<string, unknown>();
let up: UpProcess | undefined;
let home: string;
let run: CliResult;
let connection: Connection;
let raw: Client;
let codec: CodecServer;
/** Every workflow of the run with its raw (undecoded) history. */
const histories = new Map<string, unknown>();

/** A database owned by a role of its own, reached with a password that appears nowhere else. */
async function databaseWithPassword(): Promise<string> {
  const role = `fw_sec_${crypto.randomBytes(3).toString('hex')}`;
  const admin = new PgClient({ connectionString: pgServerUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${DB_PASSWORD}'`);
  } finally {
    await admin.end();
  }
  const url = new URL(await ensureDatabase(pgServerUrl(), role));
  const adminDb = new PgClient({ connectionString: url.toString() });
  await adminDb.connect();
  await adminDb.query(`ALTER DATABASE ${role} OWNER TO ${role}; ALTER SCHEMA public OWNER TO ${role}`).finally(() => adminDb.end());
  url.username = role;
  url.password = DB_PASSWORD;
  await applyMigrations(url.toString());
  return url.toString();
}

beforeAll(async () => {
  home = scratchDir('secrets');
  const prefix = uniqueName('t-sec');
  const env = await stackEnv(home, {
    TEMPORAL_ADDRESS: temporalAddress(),
    DATABASE_URL: await databaseWithPassword(),
    FLYWHEEL_TASK_QUEUE_PREFIX: prefix,
    FLYWHEEL_PAYLOAD_KEY: PAYLOAD_KEY,
    FLYWHEEL_API_TOKEN: API_TOKEN,
    OPENAI_API_KEY: OPENAI_KEY,
  });
  up = spawnUp(home, env);
  await up.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
  const specFile = path.join(home, 'spec.json');
  fs.writeFileSync(
    specFile,
    JSON.stringify(fixtureSpec(campaignId, { steps: 5 }, { budget: { experiments: 2, parallelism: 1 }, batchSize: 2 })),
  );
  run = await runCli(env, ['run', specFile, '--id', workflowId, '--json']);

  connection = await Connection.connect({ address: temporalAddress() });
  raw = new Client({ connection }); // no codec: sees what the server stores
  // The same data converter as the CLI and the workers: a client with the key.
  const keyed = new Client({ connection, dataConverter: flywheelDataConverter(PAYLOAD_KEY) });
  const crashing = (name: string): CampaignSpecInput => {
    const s = fixtureSpec(name, { steps: 5 });
    return { ...s, trainer: { ...s.trainer, fixed: { crash: true } } };
  };
  const dbh = openDb(env.DATABASE_URL!, { max: 1 });
  const crashVersion = await registerCampaignVersion(dbh.db, crashing(crashLoop.split('/')[0])).finally(() => dbh.close());
  const failing: [string, string][] = [
    [badSpecLoop, `${badSpecLoop.split('/')[0]}@bogus_${FAILURE_SECRET}`],
    [crashLoop, crashVersion.versionId],
  ];
  await Promise.all(
    failing.map(async ([id, campaignVersionId]) => {
      const handle = await keyed.workflow.start('innerLoop', {
        taskQueue: taskQueue('orchestration', prefix),
        workflowId: id,
        args: [{ campaignVersionId }],
      });
      failures.set(
        id,
        await handle.result().then(
          () => undefined,
          (e: unknown) => e,
        ),
      );
      histories.set(id, await raw.workflow.getHandle(id).fetchHistory());
    }),
  );
  for await (const w of raw.workflow.list({ query: `WorkflowId STARTS_WITH "${campaignId}/"` })) {
    histories.set(w.workflowId, await raw.workflow.getHandle(w.workflowId, w.runId).fetchHistory());
  }
  codec = await startCodecServer({
    codec: new AesGcmPayloadCodec(parsePayloadKeys(PAYLOAD_KEY)),
    port: 0,
    token: API_TOKEN,
    origins: ['http://127.0.0.1:8233'],
  });
}, 420_000);

afterAll(async () => {
  if (up) {
    up.child.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([up.exited, new Promise((r) => (timer = setTimeout(r, 20_000)))]);
    clearTimeout(timer);
    up.killAll();
  }
  await codec?.close();
  await connection?.close();
});

/** A payload as the codec-server protocol carries it. */
const jsonPayload = (p: Payload) => ({
  metadata: Object.fromEntries(Object.entries(p.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
  data: Buffer.from(p.data!).toString('base64'),
});

/** Every payload in a history, with the JSON path where it sits. */
function payloadsOf(node: unknown, at = ''): { at: string; payload: Payload }[] {
  if (!node || typeof node !== 'object') return [];
  if (node instanceof Uint8Array) return [];
  if ('data' in node && 'metadata' in node && (node as Payload).metadata && typeof (node as Payload).metadata === 'object')
    return [{ at, payload: node as Payload }];
  return Object.entries(node).flatMap(([k, v]) => payloadsOf(v, `${at}.${k}`));
}

const text = (b: Uint8Array | null | undefined): string => Buffer.from(b ?? []).toString('utf8');

/** A history as text with every byte field read as UTF-8, so a secret in a payload or a failure would show. */
function historyText(h: unknown): string {
  return JSON.stringify(h, (_k, v: unknown) => {
    if (v instanceof Uint8Array) return text(v);
    const b = v as { type?: string; data?: number[] } | null;
    return b && b.type === 'Buffer' && Array.isArray(b.data) ? Buffer.from(b.data).toString('utf8') : v;
  });
}

test('the run completes through the encrypted client and workers', () => {
  expect(run.stderr).not.toMatch(/error/i);
  expect(run.status).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ experiments: 2 });
  // the loop, its baseline and its two experiments
  expect(histories.size).toBeGreaterThanOrEqual(3);
});

/** What the SDK's core writes, in plain JSON, as a local activity marker's `data`: its bookkeeping, no input or result. */
const LOCAL_ACTIVITY_MARKER_KEYS = ['activity_id', 'activity_type', 'attempt', 'backoff', 'complete_time', 'original_schedule_time', 'seq'];

test("every payload in the stored histories is AES-GCM ciphertext, except search attributes and markers' bookkeeping", () => {
  let encrypted = 0;
  for (const [id, h] of histories) {
    for (const { at, payload } of payloadsOf(h)) {
      // Search attributes must stay readable to the server (it indexes them); a patch marker holds the patch id only.
      if (/searchAttributes|indexedFields|markerRecordedEventAttributes\.details\.patch-data/.test(at)) continue;
      // A local activity's marker: the core's own record of it (sequence number, type, attempt, times) is plain JSON
      // and holds nothing else; its result, beside it, is encrypted like any payload.
      if (/markerRecordedEventAttributes\.details\.data\./.test(at)) {
        const keys = Object.keys(JSON.parse(text(payload.data)) as object).sort();
        expect({ id, at, keys: keys.filter((k) => !LOCAL_ACTIVITY_MARKER_KEYS.includes(k)) }).toEqual({ id, at, keys: [] });
        expect(text(payload.data)).not.toContain(campaignId);
        continue;
      }
      expect({ id, at, encoding: text(payload.metadata?.encoding) }).toEqual({ id, at, encoding: ENCRYPTED_ENCODING });
      expect(text(payload.data)).not.toContain(campaignId);
      encrypted++;
    }
  }
  expect(encrypted).toBeGreaterThan(10);
});

test('the codec endpoint decodes them for a caller with the token, and refuses one without', async () => {
  const input = payloadsOf(histories.get(workflowId)).find((p) => /workflowExecutionStartedEventAttributes\.input/.test(p.at))!.payload;
  const body = JSON.stringify({ payloads: [jsonPayload(input)] });
  const headers = { 'content-type': 'application/json', 'x-namespace': 'default', origin: 'http://127.0.0.1:8233' };

  const ok = await fetch(`${codec.url}/decode`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${API_TOKEN}` }, body });
  expect(ok.status).toBe(200);
  expect(ok.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:8233');
  const [decoded] = ((await ok.json()) as { payloads: { metadata: Record<string, string>; data: string }[] }).payloads;
  expect(Buffer.from(decoded.metadata.encoding, 'base64').toString()).toBe('json/plain');
  expect(JSON.parse(Buffer.from(decoded.data, 'base64').toString())).toMatchObject({
    campaignVersionId: expect.stringMatching(new RegExp(`^${campaignId}@[0-9a-f]{12}$`)),
  });

  const denied = await fetch(`${codec.url}/decode`, { method: 'POST', headers, body });
  expect(denied.status).toBe(401);
  const wrong = await fetch(`${codec.url}/decode`, { method: 'POST', headers: { ...headers, authorization: 'Bearer nope' }, body });
  expect(wrong.status).toBe(401);

  const preflight = await fetch(`${codec.url}/decode`, {
    method: 'OPTIONS',
    headers: { origin: 'http://127.0.0.1:8233', 'access-control-request-method': 'POST' },
  });
  expect(preflight.status).toBe(204);
  expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
  const foreign = await fetch(`${codec.url}/decode`, { method: 'OPTIONS', headers: { origin: 'http://evil.example' } });
  expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
});

test("the temporal CLI shows the history decoded through the endpoint (the UI's protocol)", async () => {
  // Asynchronously: the codec server answers from this process.
  const show = async (extra: string[]): Promise<string> =>
    (
      await execFileAsync(
        findTemporalCli(),
        ['workflow', 'show', '--address', temporalAddress(), '-w', workflowId, '--output', 'json', ...extra],
        { maxBuffer: 64 << 20, timeout: 60_000 },
      )
    ).stdout;
  const encrypted = Buffer.from(ENCRYPTED_ENCODING).toString('base64');
  expect(await show([])).toContain(encrypted);
  const decoded = await show(['--codec-endpoint', codec.url, '--codec-auth', `Bearer ${API_TOKEN}`]);
  expect(decoded).not.toContain(encrypted);
  expect(decoded).toContain(Buffer.from('json/plain').toString('base64'));
  await expect(show(['--codec-endpoint', codec.url, '--codec-auth', 'Bearer wrong'])).rejects.toThrow();
}, 180_000);

test('no configured secret appears in any history (raw or decoded), log file or CLI output', async () => {
  const local = new AesGcmPayloadCodec(parsePayloadKeys(PAYLOAD_KEY));
  const sources: [string, string][] = [
    ['flywheel run stdout', run.stdout],
    ['flywheel run stderr', run.stderr],
    ['flywheel up output', up!.lines.join('\n')],
  ];
  for (const f of fs.readdirSync(path.join(home, 'logs'))) sources.push([`logs/${f}`, fs.readFileSync(path.join(home, 'logs', f), 'utf8')]);
  for (const [id, h] of histories) {
    sources.push([`history ${id}`, historyText(h)]);
    const decoded = await local.decode(
      payloadsOf(h)
        .filter((p) => text(p.payload.metadata?.encoding) === ENCRYPTED_ENCODING)
        .map((p) => p.payload),
    );
    sources.push([`decoded payloads of ${id}`, decoded.map((p) => text(p.data)).join('\n')]);
  }
  expect(sources.filter(([name]) => name.startsWith('logs/worker-')).length).toBe(3);
  const leaks = sources.flatMap(([where, body]) =>
    Object.entries(SECRETS)
      .filter(([, s]) => body.includes(s))
      .map(([what]) => `${what} in ${where}`),
  );
  expect(leaks).toEqual([]);
});

type Failure = { message?: string; stackTrace?: string; encodedAttributes?: Payload; cause?: Failure };
type HistoryEvent = {
  workflowExecutionFailedEventAttributes?: { failure?: Failure };
  activityTaskFailedEventAttributes?: { failure?: Failure };
};

const failedEvent = (id: string, kind: keyof HistoryEvent): Failure | undefined =>
  (histories.get(id) as { events: HistoryEvent[] }).events.map((e) => e[kind]?.failure).find(Boolean);
const encoded = (f: Failure | undefined) => ({
  message: f?.message,
  stackTrace: f?.stackTrace || '',
  encoding: text(f?.encodedAttributes?.metadata?.encoding),
});
const ENCODED = { message: 'Encoded failure', stackTrace: '', encoding: ENCRYPTED_ENCODING };

test("an activity's failure message and stack trace are ciphertext in the history; a client with the key reads the real message", async () => {
  const activity = failedEvent(badSpecLoop, 'activityTaskFailedEventAttributes');
  expect(encoded(activity)).toEqual(ENCODED);
  // The loop's failure wraps the activity's, as it was encoded.
  expect(encoded(failedEvent(badSpecLoop, 'workflowExecutionFailedEventAttributes')?.cause)).toEqual(ENCODED);
  expect(historyText(histories.get(badSpecLoop))).not.toContain(FAILURE_SECRET);

  const failure = failures.get(badSpecLoop);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  const cause = (failure as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ActivityFailure);
  expect(cause?.cause).toBeInstanceOf(ApplicationFailure);
  expect(cause?.cause).toMatchObject({ type: 'NotFoundError', message: expect.stringContaining(`bogus_${FAILURE_SECRET}`) });

  // The UI decodes a failure's attributes through the same endpoint.
  const res = await fetch(`${codec.url}/decode`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` },
    body: JSON.stringify({ payloads: [jsonPayload(activity!.encodedAttributes!)] }),
  });
  expect(res.status).toBe(200);
  const [decoded] = ((await res.json()) as { payloads: { data: string }[] }).payloads;
  const attrs = JSON.parse(Buffer.from(decoded.data, 'base64').toString()) as { message: string; stack_trace: string };
  expect(attrs.message).toContain(`bogus_${FAILURE_SECRET}`);
  expect(attrs.stack_trace).toMatch(/campaign-versions/);
});

test("the workflow code's own failure is encoded inside the workflow bundle, and a client with the key reads it", () => {
  expect(encoded(failedEvent(crashLoop, 'workflowExecutionFailedEventAttributes'))).toEqual(ENCODED);
  const failure = failures.get(crashLoop);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause).toMatchObject({
    type: 'BaselineFailed',
    message: expect.stringMatching(/^the untrained baseline failed: the trainer exited with code 3: fixture-trainer: exploding on purpose/),
  });
});
