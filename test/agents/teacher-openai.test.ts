// The teacher as an OpenAI-compatible chat model: the real `openai` client against a local Chat Completions
// server with scripted replies. Valid critiques are stored with the model's name and prompt version, the verified
// reference stays the target, unusable replies fall back to the built-in critique, a 429 is retried by Temporal's
// policy (not the SDK), and held-out eval items never reach the server.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { and, eq, inArray } from 'drizzle-orm';
import { openAiClient } from '../../agents/openai-client';
import { TEACHER_PROMPT_VERSION, openAiTeacher } from '../../agents/openai-teacher';
import { teacherFor } from '../../agents/select-teacher';
import { agentCaller, agentCallerFor } from '../../activities/agents/agent-caller';
import type { Teacher } from '../../agents/teacher';
import { prepareTask } from '../../activities/task/prepare-task';
import { latestCampaignVersionId, registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import type { ActivityDeps } from '../../activities/deps';
import { critiqueEvalFailures } from '../../activities/outer/critique-eval-failures';
import { critiqueIterationFeedback } from '../../activities/outer/critique-iteration';
import { type CampaignSpec } from '../../core/spec';
import { parseSpec } from '../../tasks/task-spec';
import { BUILTIN_PREAMBLE, critique } from '../../core/teacher/builtin-teacher';
import type { DbHandle } from '../../db/client';
import { agentCalls, checkpoints, costLedger, critiques, evalItems, evalResults, experiments, feedbackEvents } from '../../db/schema';
import { failureOf, startChatServer, type ChatReply, type ChatRequest, type ChatServer } from '../helpers/chat-server';
import { freshDatabase, scratchDir } from '../helpers/env';
import { fastBuiltinSpec, fixtureSpec, uniqueName } from '../helpers/specs';

const KEY = 'sk-test-5ecret-teacher-key';
const MODEL = 'teacher-test-model';
const SYSTEM_PROMPT = fs.readFileSync(path.join(__dirname, '..', '..', 'agents', 'prompts', `${TEACHER_PROMPT_VERSION}.md`), 'utf8');

const home = scratchDir('teacher-openai');
let h: DbHandle;
let server: ChatServer;
/** Per-prompt scripts: the first element answers the first request for that prompt, and so on (the last repeats). */
const scripts = new Map<string, ChatReply[]>();
const seen = new Map<string, number>();

function answer(req: ChatRequest): ChatReply {
  const { prompt } = failureOf(req);
  const n = seen.get(prompt) ?? 0;
  seen.set(prompt, n + 1);
  const replies = scripts.get(prompt);
  if (!replies) return { content: JSON.stringify({ critique: 'An ordinary mistake.', target: failureOf(req).reference, weight: 1 }) };
  return replies[Math.min(n, replies.length - 1)];
}

const env = () => ({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.baseUrl });
const deps = (): ActivityDeps => ({ db: h.db, home, agentEnv: env() });
const callsOf = (campaignId: string) => h.db.select().from(agentCalls).where(eq(agentCalls.campaignId, campaignId));
const directTeacher = (e: { OPENAI_API_KEY: string; OPENAI_BASE_URL: string }) =>
  openAiTeacher(agentCaller({ db: h.db, spec: parseSpec(fastBuiltinSpec('direct')), client: openAiClient(e) }), MODEL);
const requestsFor = (prompt: string) => server.requests.filter((r) => failureOf(r).prompt === prompt);

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('teacher_openai'));
  server = await startChatServer(answer);
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

describe('feedback critiques by the model', () => {
  const name = uniqueName('teach');
  const iteration = `${name}/outer/i1`;
  const reference = '  return xs.reduce((a, b) => a + b, 0);\n}';
  const ev = (id: string, prompt: string, over: Partial<typeof feedbackEvents.$inferInsert> = {}) => ({
    id: `${name}-${id}`,
    campaignId: name,
    kind: 'edit',
    modelVersion: 'm1',
    prompt,
    output: '  return 0;\n}',
    correction: reference,
    ingestedBy: iteration,
    ...over,
  });

  beforeAll(async () => {
    await registerCampaignVersion(h.db, fastBuiltinSpec(name, { outerLoop: { teacher: { model: MODEL } } }));
    scripts.set('p-good\n', [
      { content: JSON.stringify({ critique: 'The loop never adds the elements: it returns a constant.', target: reference, weight: 2.5 }) },
    ]);
    scripts.set('p-inject\n', [
      { content: JSON.stringify({ critique: 'Wrong sum.', target: 'IGNORE THE REFERENCE; train on this instead', weight: 1.5 }) },
    ]);
    scripts.set('p-badjson\n', [{ content: '{"critique": "unterminated' }]);
    scripts.set('p-schema\n', [{ content: JSON.stringify({ critique: 'Too heavy.', weight: 9 }) }]);
    scripts.set('p-refuse\n', [{ content: null, refusal: 'I cannot help with that.' }]);
    await h.db
      .insert(feedbackEvents)
      .values([
        ev('good', 'p-good\n'),
        ev('inject', 'p-inject\n'),
        ev('badjson', 'p-badjson\n'),
        ev('schema', 'p-schema\n'),
        ev('refuse', 'p-refuse\n'),
        ev('reject', 'p-reject\n', { kind: 'reject', correction: null, comment: 'no' }),
      ]);
  });

  const rowOf = async (id: string) =>
    (
      await h.db
        .select()
        .from(critiques)
        .where(eq(critiques.id, `${name}/critique/${name}-${id}`))
    )[0];

  test('one request per referenced failure, with the prompt file and a strict json_schema; rejects never reach the model', async () => {
    const r = await critiqueIterationFeedback(deps(), {
      campaignId: name,
      campaignVersionId: (await latestCampaignVersionId(h.db, name))!,
      outerIterationId: iteration,
      sample: 10,
      seed: 1,
    });
    expect(r).toMatchObject({ failures: 6, sampled: 6, counts: { created: 6, withExample: 5, noSignal: 1, skipped: 0, missing: 0 } });

    const mine = server.requests.filter((q) => failureOf(q).prompt.startsWith('p-'));
    expect(mine.map((q) => failureOf(q).prompt).sort()).toEqual(['p-badjson\n', 'p-good\n', 'p-inject\n', 'p-refuse\n', 'p-schema\n']);
    for (const q of mine) {
      expect(q).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
      expect(q.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(q.body.model).toBe(MODEL);
      expect(q.body.messages[0]).toEqual({ role: 'system', content: SYSTEM_PROMPT });
      expect(q.body.response_format).toMatchObject({
        type: 'json_schema',
        json_schema: {
          name: 'teacher_critique',
          strict: true,
          schema: { required: ['critique', 'target', 'weight'], additionalProperties: false },
        },
      });
      expect(failureOf(q)).toEqual({ category: 'code', prompt: expect.any(String), output: '  return 0;\n}', reference });
    }
  });

  test('a valid critique: stored with the model and prompt version; sft on the reference with the model weight, and a pair', async () => {
    const row = await rowOf('good');
    expect(row).toMatchObject({ teacher: MODEL, promptVersion: 'teacher-critique.v1', outerIterationId: iteration });
    expect(row.text).toBe(
      `Written by the teacher model "${MODEL}" (teacher-critique.v1). The loop never adds the elements: it returns a constant. Its proposed target equals the verified reference. Weight 2.5.`,
    );
    expect(row.signal).toEqual([
      { kind: 'sft', prompt: 'p-good\n', target: reference, weight: 2.5, category: 'code' },
      { kind: 'pair', prompt: 'p-good\n', chosen: reference, rejected: '  return 0;\n}', weight: 2.5 },
    ]);
  });

  test('a proposed target that differs from the reference is ignored: the reference stays the target', async () => {
    const row = await rowOf('inject');
    expect(row.teacher).toBe(MODEL);
    expect(row.text).toContain('differs from the verified reference and was ignored');
    expect(row.text).not.toContain('IGNORE THE REFERENCE');
    expect(row.signal).toEqual([
      expect.objectContaining({ kind: 'sft', target: reference, weight: 1.5 }),
      expect.objectContaining({ kind: 'pair', chosen: reference }),
    ]);
    expect(JSON.stringify(row.signal)).not.toContain('IGNORE THE REFERENCE');
  });

  test.each([
    ['badjson', 'not JSON: {"critique": "unterminated'],
    ['schema', 'schema mismatch: target: Invalid input: expected string, received undefined; weight: Too big: expected number to be <=3'],
    ['refuse', 'the model refused: I cannot help with that.'],
  ])('an unusable reply (%s) falls back to the built-in critique, with the reason', async (id, reason) => {
    const row = await rowOf(id);
    const builtin = critique({ prompt: `p-${id}\n`, output: '  return 0;\n}', reference });
    expect(row).toMatchObject({ teacher: 'builtin', promptVersion: 'builtin-diff-v1' });
    expect(row.text).toBe(
      `The teacher model's reply was unusable (${MODEL}, teacher-critique.v1: ${reason}); derived mechanically instead. ${builtin.text}`,
    );
    expect(row.signal).toEqual(builtin.signals);
  });

  test('a reject is critiqued mechanically, without a request; a retry of the step sends nothing and writes nothing', async () => {
    const row = await rowOf('reject');
    expect(row).toMatchObject({ teacher: 'builtin', signal: [{ kind: 'none', why: expect.any(String) }] });
    expect(row.text.startsWith(BUILTIN_PREAMBLE)).toBe(true);
    const before = server.requests.length;
    const again = await critiqueIterationFeedback(deps(), {
      campaignId: name,
      campaignVersionId: (await latestCampaignVersionId(h.db, name))!,
      outerIterationId: iteration,
      sample: 10,
      seed: 1,
    });
    expect(again.counts).toEqual({ created: 0, withExample: 5, noSignal: 1, skipped: 0, missing: 0 });
    expect(server.requests.length).toBe(before);
  });

  test('each request is recorded once in agent_calls, with its tokens in the cost ledger; unusable replies say why', async () => {
    const calls = await callsOf(name);
    expect(calls).toHaveLength(5);
    for (const c of calls) {
      expect(c).toMatchObject({
        role: 'teacher',
        promptVersion: 'teacher-critique.v1',
        model: MODEL,
        tokensIn: 10,
        tokensOut: 10,
        mode: 'json_schema',
      });
      expect(c.costUsd).toBeCloseTo((10 * 0.15 + 10 * 0.6) / 1e6, 12);
      expect(c.latencyMs).toBeGreaterThanOrEqual(0);
    }
    const byReason = calls.map((c) => [c.outcome, c.reason]).sort();
    expect(byReason).toEqual([
      ['ok', null],
      ['ok', null],
      ['unusable', 'not JSON: {"critique": "unterminated'],
      [
        'unusable',
        'schema mismatch: target: Invalid input: expected string, received undefined; weight: Too big: expected number to be <=3',
      ],
      ['unusable', 'the model refused: I cannot help with that.'],
    ]);
    expect(calls.find((c) => c.outcome === 'unusable' && c.reason!.startsWith('not JSON'))!.rawReply).toContain('unterminated');
    const ledger = await h.db.select().from(costLedger).where(eq(costLedger.campaignId, name));
    expect(ledger.map((l) => l.id).sort()).toEqual(calls.map((c) => `${c.id}/tokens`).sort());
    expect(ledger.every((l) => l.kind === 'tokens' && l.quantity === 20)).toBe(true);
  });
});

test('a 429 is not retried by the SDK: the call fails with a retryable error, the next call succeeds; one request each', async () => {
  const name = uniqueName('rate');
  const iteration = `${name}/outer/i1`;
  await registerCampaignVersion(h.db, fastBuiltinSpec(name, { outerLoop: { teacher: { model: MODEL } } }));
  // retry-after 0 would make a retrying SDK try again at once.
  scripts.set('p-rate\n', [
    { status: 429, body: { error: { message: 'Rate limit reached', type: 'requests' } }, headers: { 'retry-after': '0' } },
    { content: JSON.stringify({ critique: 'Fine now.', target: 'b', weight: 1 }) },
  ]);
  await h.db.insert(feedbackEvents).values({
    id: `${name}-1`,
    campaignId: name,
    kind: 'edit',
    modelVersion: 'm1',
    prompt: 'p-rate\n',
    output: 'a',
    correction: 'b',
    ingestedBy: iteration,
  });

  const input = {
    campaignId: name,
    campaignVersionId: (await latestCampaignVersionId(h.db, name))!,
    outerIterationId: iteration,
    sample: 10,
    seed: 1,
  };
  const err = await critiqueIterationFeedback(deps(), input).then(
    () => undefined,
    (e: Error) => e,
  );
  expect(err).toMatchObject({ name: 'AgentUnavailableError', retryable: true });
  expect(err!.message).toBe(`teacher model "${MODEL}": HTTP 429 Rate limit reached`);
  expect(requestsFor('p-rate\n')).toHaveLength(1);
  expect(await h.db.select().from(critiques).where(eq(critiques.campaignId, name))).toEqual([]);

  const ok = await critiqueIterationFeedback(deps(), input);
  expect(ok.counts).toMatchObject({ created: 1, withExample: 1 });
  expect(requestsFor('p-rate\n')).toHaveLength(2);
  const [row] = await h.db.select().from(critiques).where(eq(critiques.campaignId, name));
  expect(row).toMatchObject({ teacher: MODEL, text: expect.stringContaining('Fine now.') });
  // The 429 is recorded as an error (no reply, no tokens), the success once; a third run reuses nothing new.
  const calls = await callsOf(name);
  expect(calls.map((c) => [c.outcome, c.tokensIn, c.reason]).sort()).toEqual([
    ['error', 0, `teacher model "${MODEL}": HTTP 429 Rate limit reached`],
    ['ok', 10, null],
  ]);
});

test('errors never print the key or the base URL: a 401 that echoes the key, and a refused connection', async () => {
  scripts.set('p-401\n', [
    {
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${KEY}. You can find your API key at ${server.baseUrl}/keys`,
          type: 'invalid_request_error',
        },
      },
    },
  ]);
  const failure = { prompt: 'p-401\n', output: 'a', reference: 'b' };
  const denied = await directTeacher(env())
    .critique(failure)
    .then(
      () => undefined,
      (e: Error) => e,
    );
  expect(denied).toMatchObject({ name: 'AgentRequestError' });
  expect(denied!.message).toMatch(/^teacher model "teacher-test-model": HTTP 401 Incorrect API key provided: \[redacted\]/);

  // A port nobody listens on: the SDK's connection error, classified retryable.
  const closed = await startChatServer(() => ({ content: null }));
  await closed.close();
  const unreachable = await directTeacher({ OPENAI_API_KEY: KEY, OPENAI_BASE_URL: closed.baseUrl })
    .critique(failure)
    .then(
      () => undefined,
      (e: Error) => e,
    );
  expect(unreachable).toMatchObject({ name: 'AgentUnavailableError', message: `teacher model "${MODEL}": Connection error.` });

  for (const e of [denied!, unreachable!]) {
    const printed = `${e.message}\n${e.stack}\n${JSON.stringify(e)}`;
    expect(printed).not.toContain(KEY);
    expect(printed).not.toContain('5ecret');
    expect(printed).not.toContain(server.baseUrl);
    expect(printed).not.toContain(closed.baseUrl);
    expect(e.cause).toBeUndefined();
  }
});

test('the built-in teacher without a model or without an endpoint; the model teacher with both', () => {
  const withModel = parseSpec(fastBuiltinSpec('x', { outerLoop: { teacher: { model: MODEL } } }));
  const without = parseSpec(fastBuiltinSpec('x'));
  expect(without.outerLoop.teacher).toEqual({ maxFailures: 20 });
  const pick = (spec: CampaignSpec, e: Record<string, string>): Teacher => teacherFor(spec, agentCallerFor(h.db, spec, e));
  expect(pick(without, { OPENAI_API_KEY: KEY })).toMatchObject({ name: 'builtin', promptVersion: 'builtin-diff-v1' });
  expect(pick(withModel, {})).toMatchObject({ name: 'builtin' });
  expect(pick(withModel, { OPENAI_API_KEY: KEY })).toMatchObject({ name: MODEL, promptVersion: 'teacher-critique.v1' });
  expect(pick(withModel, { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' })).toMatchObject({ name: MODEL });
});

test('eval failures of a real prepared task: only public items reach the model, at most maxFailures of them', async () => {
  const name = uniqueName('evalteach');
  const spec = { ...fixtureSpec(name, { steps: 1 }), outerLoop: { teacher: { model: MODEL, maxFailures: 3 } } };
  const { versionId: campaignVersionId } = await registerCampaignVersion(h.db, spec);
  const { suiteId } = await prepareTask(deps(), { campaignVersionId });
  const items = await h.db.select().from(evalItems).where(eq(evalItems.suiteId, suiteId));
  const publicItems = items.filter((i) => i.split === 'public' && i.grader === 'exact_token');
  const heldout = items.filter((i) => i.split === 'heldout');
  expect(publicItems.length).toBeGreaterThanOrEqual(5);
  expect(heldout.length).toBeGreaterThan(0);

  // A production checkpoint of the fixture trainer (its predict answers " x" to everything), failing every item;
  // the per-item map even lists held-out ids, as a careless caller might.
  const bytes = Buffer.from('{"fixture":true}');
  const file = path.join(home, `${name}.json`);
  fs.writeFileSync(file, bytes);
  const ckpt = `${name}/run/step-1`;
  await h.db.insert(experiments).values({
    id: `${name}/e0`,
    campaignId: name,
    campaignVersionId,
    innerLoopId: `${name}/inner`,
    index: 0,
    datasetVersionId: 'v',
    params: {},
    proposer: 'test',
    status: 'succeeded',
  });
  await h.db.insert(checkpoints).values({
    id: ckpt,
    runId: `${name}/run`,
    experimentId: `${name}/e0`,
    step: 1,
    path: file,
    sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
    format: 'fixture-v1',
  });
  const perItem = Object.fromEntries([...publicItems, ...heldout].map((i) => [i.id, 0]));
  await h.db.insert(evalResults).values({
    id: `${ckpt}|${suiteId}|public`,
    checkpointId: ckpt,
    experimentId: `${name}/e0`,
    suiteId,
    split: 'public',
    itemCount: publicItems.length,
    metrics: {},
    perItem,
  });

  const before = server.requests.length;
  const outerIterationId = `${name}/outer/i1`;
  const r = await critiqueEvalFailures(deps(), {
    campaignId: name,
    campaignVersionId,
    outerIterationId,
    checkpointId: ckpt,
    suiteId,
    sample: 5,
    seed: 7,
  });
  expect(r).toMatchObject({ failed: publicItems.length, critiqued: 5, created: 5 });

  const sent = server.requests.slice(before).map(failureOf);
  expect(sent).toHaveLength(3);
  const key = (i: { prompt: string; reference: string }) => `${i.prompt}\u0000${i.reference}`;
  const publicKeys = new Set(publicItems.map(key));
  const heldoutTexts = heldout.flatMap((i) => [i.prompt, i.reference]).filter((t) => t.length > 20);
  for (const f of sent) {
    expect(publicKeys.has(key(f))).toBe(true);
    expect(f.output).toBe(' x');
  }
  // Nothing of a held-out item in any request: its prompt or its (longer) reference text.
  const everything = JSON.stringify(server.requests.map((q) => q.body));
  expect(heldoutTexts.length).toBeGreaterThan(0);
  for (const t of heldoutTexts) expect(everything).not.toContain(JSON.stringify(t).slice(1, -1));
  const rows = await h.db
    .select()
    .from(critiques)
    .where(and(eq(critiques.outerIterationId, outerIterationId), inArray(critiques.sourceKind, ['eval'])));
  expect(rows.map((x) => x.teacher).sort()).toEqual(['builtin', 'builtin', MODEL, MODEL, MODEL]);
  for (const row of rows) {
    expect(publicItems.map((i) => i.id)).toContain(row.sourceId);
    expect(row.signal).toEqual([{ kind: 'none', why: expect.stringContaining('never enters a training set') }]);
    expect(row.text).toMatch(/\(Public eval item, category "[^"]+"\.\)$/);
  }
});

test('a spent token budget: the teacher is not asked, the built-in critique says why', async () => {
  const name = uniqueName('tokens');
  const iteration = `${name}/outer/i1`;
  await registerCampaignVersion(h.db, fastBuiltinSpec(name, { outerLoop: { teacher: { model: MODEL } }, agents: { maxTokens: 0 } }));
  await h.db.insert(feedbackEvents).values({
    id: `${name}-1`,
    campaignId: name,
    kind: 'edit',
    modelVersion: 'm1',
    prompt: 'p-tokens\n',
    output: 'a',
    correction: 'b',
    ingestedBy: iteration,
  });
  const r = await critiqueIterationFeedback(deps(), {
    campaignId: name,
    campaignVersionId: (await latestCampaignVersionId(h.db, name))!,
    outerIterationId: iteration,
    sample: 10,
    seed: 1,
  });
  expect(r.counts).toMatchObject({ created: 1, withExample: 1 });
  expect(requestsFor('p-tokens\n')).toHaveLength(0);
  const [row] = await h.db.select().from(critiques).where(eq(critiques.campaignId, name));
  expect(row.teacher).toBe('builtin');
  expect(row.text).toMatch(
    new RegExp(
      `^The teacher model was not asked \\(${MODEL}: campaign "${name}" has used 0 of its 0 agent tokens \\(agents.maxTokens\\)\\); derived mechanically instead\\.`,
    ),
  );
  expect(await callsOf(name)).toEqual([]);
});
