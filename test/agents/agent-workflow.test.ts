// The agents inside a running inner loop (real Temporal, real PostgreSQL, the fixture trainer, the real `openai`
// client against a local Chat Completions server): a 429 and a 500 are retried by Temporal's activity retry policy
// and every request is recorded exactly once, even across attempts (a retried activity reuses the replies it already
// has); a 500 that persists hands the batch to the sampler; cancelling the workflow aborts a slow request; the
// trainer gets the agent's parameters as data in run.json; the analyst's account is stored for each batch.
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { asc, eq } from 'drizzle-orm';
import { agentCalls, analyses, experiments, proposalBatches, trainingRuns } from '../../db/schema';
import { startChatServer, type ChatReply, type ChatRequest, type ChatServer } from '../helpers/chat-server';
import { eventually, loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { startTestWorkers, type TestWorkers } from '../helpers/workers';

const MODEL = 'agent-wf-model';
let h: LoopHarness;
let server: ChatServer;
let workers: TestWorkers;
const scripts = new Map<string, (req: ChatRequest, n: number) => ChatReply>();
const counts = new Map<string, number>();

const goalOf = (r: ChatRequest) => (JSON.parse(r.body.messages[1].content) as { goal: string }).goal;
const isAnalyst = (r: ChatRequest) => r.body.messages[0].content.includes('You are the analyst');
function answer(req: ChatRequest): ChatReply {
  if (isAnalyst(req)) return { content: JSON.stringify({ account: `Model account of ${goalOf(req)}.` }) };
  const goal = goalOf(req);
  const n = counts.get(goal) ?? 0;
  counts.set(goal, n + 1);
  return scripts.get(goal)!(req, n);
}

const proposals = (...lrs: number[]) => ({
  content: JSON.stringify({
    proposals: lrs.map((lr, i) => ({ params: { steps: 5 + i, lr }, hypothesis: `lr ${lr}; $(touch ${h.home}/pwned) \`reboot\`` })),
  }),
});
const http = (status: number, message: string): ChatReply => ({ status, body: { error: { message } }, headers: { 'retry-after': '0' } });

function spec(name: string, analyst = false) {
  return {
    ...fixtureSpec(name, { steps: 5 }, { budget: { experiments: 2, parallelism: 2 }, batchSize: 2 }),
    goal: `goal of ${name}`,
    searchSpace: { steps: { type: 'int', low: 5, high: 20 }, lr: { type: 'float', low: 0.001, high: 0.1, log: true } },
    agents: { proposer: { model: MODEL }, ...(analyst ? { analyst: { model: MODEL } } : {}) },
  };
}
const start = async (name: string, s: unknown) =>
  h.client.workflow.start('innerLoop', {
    taskQueue: `${workers.prefix}-orchestration`,
    workflowId: `${name}/inner/1`,
    args: [{ campaignVersionId: await h.version(s) }],
  });
const proposerRequests = (name: string) => server.requests.filter((r) => !isAnalyst(r) && goalOf(r) === `goal of ${name}`);
const calls = (name: string) => h.db.db.select().from(agentCalls).where(eq(agentCalls.campaignId, name)).orderBy(asc(agentCalls.createdAt));

beforeAll(async () => {
  h = await loopHarness('agent_wf');
  server = await startChatServer(answer);
  workers = await startTestWorkers({
    prefix: uniqueName('agentwf'),
    db: h.db.db,
    home: h.home,
    agentEnv: { OPENAI_API_KEY: 'sk-test-wf', OPENAI_BASE_URL: server.baseUrl },
  });
});
afterAll(async () => {
  await workers?.stop();
  await server?.close();
  await h?.close();
});

test('a 429, then a rejected reply whose repair gets a 500: Temporal retries, earlier replies are reused, every request recorded once', async () => {
  const name = uniqueName('retry');
  scripts.set(
    `goal of ${name}`,
    (_r, n) => [http(429, 'Rate limit reached'), proposals(0.5, 0.01), http(500, 'upstream failed'), proposals(0.02)][Math.min(n, 3)],
  );
  const handle = await start(name, spec(name, true));
  const result = await handle.result();
  expect(result).toMatchObject({ experiments: 2, stoppedBy: 'budget' });

  // Four proposer requests: 429 (attempt 1), the rejected reply and a 500 on its repair (attempt 2), the repair
  // again (attempt 3, the first reply reused from its record, not asked again).
  const reqs = proposerRequests(name);
  expect(reqs).toHaveLength(4);
  expect(reqs[3].body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  const rows = (await calls(name)).filter((c) => c.role === 'proposer');
  const scope = `${name}/inner/1/`;
  expect(rows.map((c) => [c.id.slice(c.id.indexOf('/proposer/')), c.outcome])).toEqual([
    ['/proposer/0/attempt1', 'error'],
    ['/proposer/0', 'rejected'],
    ['/proposer/1/attempt2', 'error'],
    ['/proposer/1', 'ok'],
  ]);
  expect(rows.every((c) => c.id.startsWith(scope))).toBe(true);
  expect(rows[0].reason).toBe(`proposer model "${MODEL}": HTTP 429 Rate limit reached`);
  expect(rows[1].reason).toContain('proposals.0: lr: 0.5 is outside [0.001, 0.1]');
  expect(rows[2].reason).toBe(`proposer model "${MODEL}": HTTP 500 upstream failed`);
  expect(new Set(rows.map((c) => c.id)).size).toBe(rows.length);

  const exps = (
    await h.db.db
      .select()
      .from(experiments)
      .where(eq(experiments.innerLoopId, `${name}/inner/1`))
      .orderBy(asc(experiments.index))
  ).filter((e) => e.index >= 0);
  expect(exps.map((e) => [e.proposer, e.params])).toEqual(
    expect.arrayContaining([
      ['agent', { steps: 6, lr: 0.01 }],
      ['agent', { steps: 5, lr: 0.02 }],
    ]),
  );
  expect(exps).toHaveLength(2);

  // The trainer reads the parameters as data; the agent's text (with shell syntax) is nowhere it could run.
  for (const e of exps) {
    const [run] = await h.db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, e.id));
    const runJson = JSON.parse(fs.readFileSync(path.join(run.runDir, 'run.json'), 'utf8')) as { params: Record<string, unknown> };
    expect(runJson.params).toMatchObject(e.params);
    expect(JSON.stringify(runJson)).not.toContain('touch');
  }
  expect(fs.existsSync(path.join(h.home, 'pwned'))).toBe(false);

  // The analyst's account of the batch, by the model, recorded once.
  const [analysis] = await h.db.db
    .select()
    .from(analyses)
    .where(eq(analyses.innerLoopId, `${name}/inner/1`));
  expect(analysis).toMatchObject({ author: MODEL, promptVersion: 'analyst.v1', text: `Model account of goal of ${name}.`, startIndex: 0 });
  expect((await calls(name)).filter((c) => c.role === 'analyst').map((c) => [c.id, c.outcome])).toEqual([[analysis.callId, 'ok']]);
}, 120_000);

test('a 500 on every attempt: after three attempts the sampler fills the batch and the loop goes on', async () => {
  const name = uniqueName('fail');
  scripts.set(`goal of ${name}`, () => http(500, 'model server down'));
  const result = await (await start(name, spec(name))).result();
  expect(result).toMatchObject({ experiments: 2 });
  expect(proposerRequests(name)).toHaveLength(3);
  const rows = await calls(name);
  expect(rows.map((c) => [c.id.slice(c.id.lastIndexOf('/') + 1), c.outcome])).toEqual([
    ['attempt1', 'error'],
    ['attempt2', 'error'],
    ['attempt3', 'error'],
  ]);
  const exps = (
    await h.db.db
      .select()
      .from(experiments)
      .where(eq(experiments.innerLoopId, `${name}/inner/1`))
  ).filter((e) => e.index >= 0);
  expect(exps.map((e) => e.proposer).sort()).toEqual(['tpe-startup', 'tpe-startup']);
  const [batch] = await h.db.db
    .select()
    .from(proposalBatches)
    .where(eq(proposalBatches.innerLoopId, `${name}/inner/1`));
  expect(batch.note).toContain(`no agent proposals: proposer model "${MODEL}": HTTP 500 model server down`);
  // No analyst model: the built-in account, from the numbers.
  const [analysis] = await h.db.db
    .select()
    .from(analyses)
    .where(eq(analyses.innerLoopId, `${name}/inner/1`));
  expect(analysis).toMatchObject({ author: 'builtin', callId: null });
  expect(analysis.text).toMatch(/^Batch e0–e1 \(2 experiments, proposed by tpe-startup\)\./);
}, 120_000);

test('a slow reply: cancelling the workflow aborts the HTTP request, recorded as cancelled', async () => {
  const name = uniqueName('slow');
  scripts.set(`goal of ${name}`, () => ({ delayMs: 600_000, reply: proposals(0.01, 0.02) }));
  const handle = await start(name, spec(name));
  await eventually('the proposer request', async () => (proposerRequests(name).length > 0 ? true : undefined));
  await handle.cancel();
  await expect(handle.result()).rejects.toBeInstanceOf(WorkflowFailedError);
  await eventually('the aborted request', async () => (server.aborted.some((r) => goalOf(r) === `goal of ${name}`) ? true : undefined));
  const row = await eventually('the cancelled call record', async () => (await calls(name)).find((c) => c.outcome === 'error'));
  expect(row.reason).toBe('cancelled: the activity was cancelled during the request');
  expect(proposerRequests(name)).toHaveLength(1);
}, 120_000);
