// Held-out items never leave the eval activity: two real outer-loop iterations of the built-in task (the second
// critiques production's eval failures through a model teacher on a local OpenAI-compatible server), then every
// recorded history (outer loops, inner loops, experiments) and every prompt sent to the agent is scanned for
// held-out text, and every logged held-out read names an eval-side reader.
import { and, eq, ne } from 'drizzle-orm';
import { evalItems, experiments, heldoutReads, innerLoops } from '../../db/schema';
import type { OuterLoopResult } from '../../contracts/outer-loop';
import { failureOf, startChatServer, type ChatServer } from '../helpers/chat-server';
import { freshDatabase, scratchDir, temporalClient } from '../helpers/env';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';
import { startTestWorkers, type TestWorkers } from '../helpers/workers';
import type { Client } from '@temporalio/client';
import type { DbHandle } from '../../db/client';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { SEED_RERUN_GROUP_STATUS } from '../../activities/outer/plan-seed-reruns';

const name = uniqueName('isolation');
let h: DbHandle;
let client: Client;
let closeClient: () => Promise<void>;
let workers: TestWorkers;
let server: ChatServer;

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('heldout_isolation'));
  const c = await temporalClient();
  client = c.client;
  closeClient = () => c.connection.close();
  server = await startChatServer((req) => ({
    content: JSON.stringify({ critique: 'A plain mistake.', target: failureOf(req).reference, weight: 1 }),
  }));
  const env = { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl };
  workers = await startTestWorkers({ prefix: uniqueName('t-iso'), db: h.db, home: scratchDir('heldout-isolation'), agentEnv: env });
}, 60_000);
afterAll(async () => {
  await workers?.stop();
  await closeClient?.();
  await server?.close();
  await h?.close();
});

test('two outer iterations: no held-out text in any history or agent prompt; reads are logged by eval-side readers', async () => {
  const spec = fastBuiltinSpec(name, {
    innerLoop: { budget: { experiments: 2, parallelism: 2 } },
    outerLoop: {
      innerBudget: { experiments: 2 },
      evalFailureSample: 5,
      minNewFeedback: 0,
      teacher: { model: 'teacher-1' },
      promotion: { margin: 0 },
    },
  } as never);
  const handle = await client.workflow.start('outerLoop', {
    taskQueue: `${workers.prefix}-orchestration`,
    workflowId: `${name}/outer/run`,
    args: [{ campaignId: name, trigger: 'cli', campaignVersionId: (await registerCampaignVersion(h.db, spec)).versionId, iterations: 2 }],
  });
  const result = (await handle.result()) as OuterLoopResult;
  expect(result.iterations.map((i) => i.status)).toHaveLength(2);
  expect(server.requests.length).toBeGreaterThan(0); // the teacher was asked about production's public failures

  const held = await h.db
    .select({ prompt: evalItems.prompt, reference: evalItems.reference })
    .from(evalItems)
    .where(eq(evalItems.split, 'heldout'));
  const needles = held.flatMap((x) => [x.prompt, x.reference]).filter((t) => t.length >= 24);
  expect(needles.length).toBeGreaterThan(10);

  const ids = [
    `${name}/outer/run`,
    // Every inner loop's workflow; the gate's seed-rerun group is a row that gathers its reruns, not a workflow (its
    // reruns, experiment workflows, are scanned below with the rest).
    ...(
      await h.db
        .select({ id: innerLoops.id })
        .from(innerLoops)
        .where(and(eq(innerLoops.campaignId, name), ne(innerLoops.status, SEED_RERUN_GROUP_STATUS)))
    ).map((r) => r.id),
    ...(await h.db.select({ id: experiments.id }).from(experiments).where(eq(experiments.campaignId, name))).map((r) => r.id),
  ];
  expect(ids.length).toBeGreaterThanOrEqual(7); // the outer loop, two inner loops, four experiments and baselines
  for (const id of ids) {
    const history = JSON.stringify(await client.workflow.getHandle(id).fetchHistory());
    for (const n of needles) expect(history.includes(JSON.stringify(n).slice(1, -1))).toBe(false);
  }
  const prompts = JSON.stringify(server.requests.map((r) => r.body.messages));
  for (const n of needles) expect(prompts.includes(JSON.stringify(n).slice(1, -1))).toBe(false);

  const readers = (await h.db.select({ reader: heldoutReads.reader }).from(heldoutReads)).map((r) => r.reader);
  expect(readers.length).toBeGreaterThan(0);
  for (const r of readers) expect(r).toMatch(/(:scoreCheckpoint$|^checkContamination:|^evaluateGate:|^promotionEvidence:)/);
}, 400_000);
