// The OpenAI-compatible teacher on a task of its own (the arithmetic task's spec): the real `openai` client against
// the local Chat Completions server of the tests (test/helpers/chat-server.ts). The model is sent the task's category
// of each sum and writes the critique; the verified reference stays the target; a reply it cannot use, and the
// failures past `maxFailures`, get the task's own teacher (which names the dropped carry), not the token diff; and
// the `critique` builder trains on whichever critique was written.
import { eq } from 'drizzle-orm';
import { buildDatasetVersion } from '../../activities/outer/build-dataset-version';
import { critiqueIterationFeedback } from '../../activities/outer/critique-iteration';
import type { ActivityDeps } from '../../activities/deps';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { datasetDirOf } from '../../services/paths';
import { critiquePromptOf } from '../../core/teacher/signal-prompts';
import { ARITHMETIC_TEACHER } from '../../tasks/arithmetic/teacher';
import type { DbHandle } from '../../db/client';
import { critiques, datasets, datasetVersions, examples, feedbackEvents } from '../../db/schema';
import { failureOf, startChatServer, type ChatServer } from '../helpers/chat-server';
import { freshDatabase, scratchDir } from '../helpers/env';
import { fastBuiltinSpec } from '../helpers/specs';
import fs from 'node:fs';

const MODEL = 'arith-teacher-model';
const C = 'arith-openai';
const ITER = `${C}/outer/i1`;
const PARENT = `${C}/sums@base`;
const home = scratchDir('teacher-openai-task');
let h: DbHandle;
let server: ChatServer;
/** The model's reply to these is cut off: two of the four sums, so the three it is sent hold at least one of each. */
const UNUSABLE = new Set(['12+34=', '99+99=']);

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('teacher_openai_task'));
  server = await startChatServer((req) => {
    const f = failureOf(req);
    if (UNUSABLE.has(f.prompt)) return { content: '{"critique": "unterminated' };
    return { content: JSON.stringify({ critique: `The model forgot to carry in ${f.prompt}`, target: f.reference, weight: 2 }) };
  });
});
afterAll(async () => {
  await server?.close();
  await h?.close();
});

test('the model critiques the sums it is sent, with their category; the rest get the arithmetic teacher', async () => {
  const deps: ActivityDeps = { db: h.db, home, agentEnv: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl } };
  const { versionId } = await registerCampaignVersion(
    h.db,
    fastBuiltinSpec(C, {
      outerLoop: { signals: ['reference', 'critique'], teacher: { model: MODEL, task: 'arithmetic', maxFailures: 3 } },
    }),
  );
  const ev = (id: string, prompt: string, output: string, correction: string) => ({
    id,
    campaignId: C,
    kind: 'edit',
    modelVersion: 'm1',
    prompt,
    output,
    correction,
    ingestedBy: ITER,
  });
  // Sampled in a seeded order; three reach the model (maxFailures), the fourth gets the task's teacher.
  await h.db
    .insert(feedbackEvents)
    .values([
      ev('a', '23+58=', '071\n', '081\n'),
      ev('b', '12+34=', '036\n', '046\n'),
      ev('c', '75+41=', '016\n', '116\n'),
      ev('d', '99+99=', '188\n', '198\n'),
    ]);
  const r = await critiqueIterationFeedback(deps, {
    campaignId: C,
    campaignVersionId: versionId,
    outerIterationId: ITER,
    sample: 10,
    seed: 1,
  });
  expect(r.counts).toMatchObject({ created: 4, withExample: 4 });

  const sent = server.requests.map(failureOf);
  expect(sent).toHaveLength(3);
  const categoryOf: Record<string, string> = { '23+58=': 'carry', '12+34=': 'no-carry', '75+41=': 'carry', '99+99=': 'carry' };
  for (const f of sent) expect(f.category).toBe(categoryOf[f.prompt]);

  const rows = await h.db.select().from(critiques).where(eq(critiques.outerIterationId, ITER));
  const byPrompt = Object.fromEntries(rows.map((c) => [(c.signal as { prompt: string }[])[0].prompt, c]));
  const asked = new Set(sent.map((f) => f.prompt));
  const seen = { model: 0, unusable: 0, pastCap: 0 };
  for (const [prompt, c] of Object.entries(byPrompt)) {
    const sft = (c.signal as { kind: string; target: string; category: string; weight: number }[])[0];
    expect(sft).toMatchObject({ kind: 'sft', category: categoryOf[prompt] });
    if (!asked.has(prompt)) {
      // Past maxFailures: the task's teacher, not the token diff.
      seen.pastCap++;
      expect(c.teacher).toBe(ARITHMETIC_TEACHER);
      expect(c.text).toMatch(/^Written by the arithmetic task's teacher/);
      expect(c.text).toMatch(/the \w+ digit is \d, not \d/);
    } else if (UNUSABLE.has(prompt)) {
      // An unusable reply: the task's teacher, saying why.
      seen.unusable++;
      expect(c.teacher).toBe(ARITHMETIC_TEACHER);
      expect(c.text).toMatch(/^The teacher model's reply was unusable \(arith-teacher-model/);
      expect(c.text).toMatch(/the \w+ digit is \d, not \d/);
    } else {
      seen.model++;
      expect(c.teacher).toBe(MODEL);
      expect(c.text).toContain(`The model forgot to carry in ${prompt}`);
      expect(sft.weight).toBe(2);
    }
  }
  expect(seen.pastCap).toBe(1);
  expect(seen.model).toBeGreaterThanOrEqual(1);
  expect(seen.unusable).toBeGreaterThanOrEqual(1);

  // The critique builder trains on the critique that was written, whoever wrote it.
  const dir = datasetDirOf(home, PARENT);
  fs.mkdirSync(dir, { recursive: true });
  await h.db.insert(datasets).values({ id: `${C}/sums`, campaignId: C, name: 'sums' });
  await h.db.insert(datasetVersions).values({ id: PARENT, datasetId: `${C}/sums`, path: dir, contentHash: 'base', countsBySource: {} });
  const v = await buildDatasetVersion(
    { db: h.db, home },
    { campaignId: C, parentVersionId: PARENT, critiqueIds: rows.map((c) => c.id), signals: ['critique'] },
  );
  const made = await h.db.select().from(examples).where(eq(examples.datasetVersionId, v.versionId));
  expect(made).toHaveLength(4);
  for (const e of made) {
    const c = rows.find((x) => x.id === e.sourceRef)!;
    const f = (await h.db.select().from(feedbackEvents).where(eq(feedbackEvents.id, c.sourceId)))[0];
    expect(e.prompt).toBe(critiquePromptOf(f.prompt, f.output));
    expect(e.completion).toBe(c.text);
  }
});
