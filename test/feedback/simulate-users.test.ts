// Simulated users end to end: the built-in task prepared for a campaign (corpus, eval suite), a real checkpoint
// promoted and served by `flywheel serve`'s server, and rounds of users whose verdicts arrive through the HTTP API.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { inArray, like } from 'drizzle-orm';
import { corpusDirOf, readTrainFiles, ensureCorpus } from '../../tasks/builtin-code/corpus-cache';
import { prepareTask } from '../../activities/task/prepare-task';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { simulateUsers, SimulationRequestError } from '../../services/simulate-users';
import { builtinCodeUsers, promptsOfRound } from '../../tasks/builtin-code/user-rounds';
import { critiqueFeedback } from '../../activities/outer/critique-feedback';
import { startFeedbackServer, type FeedbackServer } from '../../server/feedback-server';
import { splitOfFile } from '../../tasks/builtin-code/eval-items';
import { greedyComplete } from '../../formats/charlm/model';
import { findOverlaps } from '../../core/dataset/overlap';
import type { DbHandle } from '../../db/client';
import { critiques, evalItems, feedbackEvents } from '../../db/schema';
import { promote, trainCheckpoint, type TrainedCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { freePort } from '../helpers/ports';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

const BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');
const TOKEN = 'sim-token-77';
const home = scratchDir('simulate-users');
const campaignId = uniqueName('sim');
let h: DbHandle;
let dbUrl: string;
let server: FeedbackServer;
let ckpt: TrainedCheckpoint;
let trainText: string;

beforeAll(async () => {
  ({ handle: h, url: dbUrl } = await freshDatabase('simulate_users'));
  const { versionId: campaignVersionId } = await registerCampaignVersion(h.db, fastBuiltinSpec(campaignId));
  await prepareTask({ db: h.db, home }, { campaignVersionId });
  trainText = readTrainFiles(corpusDirOf(home), await ensureCorpus(corpusDirOf(home))).text;
  ckpt = await trainCheckpoint({
    dir: path.join(home, 'ckpt'),
    id: `${campaignId}/inner/e0/r1/step-150`,
    text: trainText.slice(0, 200_000),
    seed: 1,
    steps: 150,
    db: h.db,
  });
  await promote(h.db, campaignId, ckpt.id);
  server = await startFeedbackServer({ db: h.db, port: await freePort(), token: TOKEN });
}, 240_000);
afterAll(async () => {
  await server?.close();
  await h?.close();
});

const round = (r: number, over: Partial<Parameters<typeof simulateUsers>[0]> = {}) =>
  simulateUsers({
    apiUrl: server.url,
    token: TOKEN,
    campaignId,
    round: r,
    events: 40,
    seed: 5,
    task: builtinCodeUsers({ corpusDir: corpusDirOf(home) }),
    ...over,
  });

test('a round sends one event per prompt, answered by the production model and judged against the true continuation', async () => {
  const r = await round(1);
  expect(r).toMatchObject({ sent: 40, inserted: 40, duplicates: 0, modelVersions: [ckpt.id] });
  expect(Object.values(r.byKind).reduce((a, b) => a + b, 0)).toBe(40);
  // The current model does not meet these users' preferences: fewer than half of them accept its answer.
  expect(r.byKind.accept).toBeLessThan(20);
  expect(r.byKind.edit).toBeGreaterThan(0);

  const prompts = await promptsOfRound({ round: 1, events: 40, seed: 5, corpusDir: corpusDirOf(home) });
  const rows = await h.db
    .select()
    .from(feedbackEvents)
    .where(like(feedbackEvents.id, `sim-${campaignId}-r1-%`));
  expect(rows).toHaveLength(40);
  for (const e of rows) {
    const k = Number(e.id.slice(e.id.lastIndexOf('-') + 1));
    const p = prompts[k];
    expect(splitOfFile(p.sourceFile)).toBe('train');
    expect(trainText).toContain(p.prompt + p.reference);
    expect(e).toMatchObject({
      campaignId,
      modelVersion: ckpt.id,
      prompt: p.prompt,
      output: greedyComplete(ckpt.model, p.prompt, Buffer.byteLength(p.reference)),
    });
    if (e.kind === 'edit') {
      expect(e.correction).toBe(p.reference);
      expect(e.output).not.toBe(p.reference);
    } else {
      expect(e.correction).toBeNull();
    }
  }

  // No prompt with its continuation comes near any eval item (public or held-out) of the campaign's suite.
  const evals = await h.db.select({ id: evalItems.id, prompt: evalItems.prompt, reference: evalItems.reference }).from(evalItems);
  expect(evals.length).toBeGreaterThan(100);
  const overlaps = findOverlaps(
    prompts.map((p) => ({ key: p.id, text: p.prompt + p.reference })),
    evals.map((e) => ({ id: e.id, text: e.prompt + e.reference })),
  );
  expect(overlaps).toEqual([]);

  // The teacher turns every edit into an SFT example whose target is the true continuation.
  const c = await critiqueFeedback(h.db, { campaignId, eventIds: rows.map((e) => e.id) });
  expect(c.counts.withExample).toBe(r.byKind.edit);
  const stored = await h.db.select().from(critiques).where(inArray(critiques.id, c.critiqueIds));
  for (const s of stored.filter((x) => rows.find((e) => e.id === x.sourceId)!.kind === 'edit')) {
    const edit = rows.find((e) => e.id === s.sourceId)!;
    expect(s.signal[0]).toMatchObject({
      kind: 'sft',
      prompt: edit.prompt,
      target: edit.correction,
    });
  }
});

test('the same round again stores nothing; the next round asks other prompts', async () => {
  const first = await round(1);
  expect(first).toMatchObject({ sent: 40, inserted: 0, duplicates: 40 });
  const next = await round(2, { events: 10 });
  expect(next).toMatchObject({ sent: 10, inserted: 10 });
  const p1 = (await promptsOfRound({ round: 1, events: 40, seed: 5, corpusDir: corpusDirOf(home) })).map((p) => p.id);
  const p2 = (await promptsOfRound({ round: 2, events: 10, seed: 5, corpusDir: corpusDirOf(home) })).map((p) => p.id);
  expect(p2.filter((id) => p1.includes(id)).length).toBeLessThan(3);
});

test('errors from the API are reported with their status: no token, no campaign', async () => {
  await expect(round(3, { token: undefined })).rejects.toMatchObject({ name: 'SimulationRequestError', status: 401 });
  await expect(round(3, { campaignId: 'nope' })).rejects.toEqual(
    new SimulationRequestError(404, 'POST /v1/complete: 404 campaign "nope" does not exist'),
  );
  expect(await h.db.select().from(feedbackEvents).where(like(feedbackEvents.id, 'sim-%-r3-%'))).toEqual([]);
});

test('`flywheel simulate-users` runs a round as a real process; a re-run inserts nothing', async () => {
  const env = { ...process.env, FLYWHEEL_HOME: home, DATABASE_URL: dbUrl, FLYWHEEL_API_TOKEN: TOKEN };
  const cli = (args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, [BIN, 'simulate-users', ...args], { env, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
      ),
    );
  const args = [campaignId, '--url', server.url, '--round', '4', '--events', '6', '--seed', '5', '--json'];
  const a = await cli(args);
  expect(a.stderr).toBe('');
  expect(JSON.parse(a.stdout)).toMatchObject({ sent: 6, inserted: 6, duplicates: 0, modelVersions: [ckpt.id] });
  expect(JSON.parse((await cli(args)).stdout)).toMatchObject({ sent: 6, inserted: 0, duplicates: 6 });
  const bad = await cli([campaignId, '--url', server.url, '--round', '-1']);
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain('--round must be an integer');
});
