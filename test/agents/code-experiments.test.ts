// Code experiments end to end (issue 37): an inner loop on the reference PyTorch trainer imported as a recipe
// (train.py mutable), its proposer a scripted Chat Completions server on 127.0.0.1 returning real patches: one that
// helps (four times the steps with a warm-up), one that hurts (a learning rate a hundred times smaller), one that does
// not apply, one outside `mutable`, a duplicate, and one that tries to read outside its sandbox. Real Temporal,
// PostgreSQL, python3 training tiny models on the CPU and Flywheel's grader on the public split of a task of its own
// (helpers/recipe-task.ts), on which a weak control (150 steps) passes a little over half the items and the patch that
// helps nearly all: the patch is kept as a new commit after real training, the hurtful one reverted. The orchestration
// worker (workflows and the proposer activity) runs as a process that is SIGKILLed while the second batch's proposal
// is in flight and started again: no patch is applied twice, none is lost. Then the dashboard, over HTTP, on what the
// loop left: the campaign page's recipe history and the kept experiment's diff.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { asc, eq } from 'drizzle-orm';
import { evalItems, experiments, recipeCommits, recipePatches, trainingRuns } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { fmtNum } from '../../server/dashboard/html';
import { startDashboard } from '../../server/dashboard/server';
import { startChatServer, type ChatReply, type ChatRequest, type ChatServer } from '../helpers/chat-server';
import { cliEnv } from '../helpers/cli';
import { eventually, loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { torchPatches, torchRecipeFolder, torchRecipeSpec } from '../helpers/recipe-patches';
import { registerRecipeTask } from '../helpers/recipe-task';
import { requires } from '../helpers/requires';
import { sandboxAvailable } from '../helpers/sandbox';
import { uniqueName } from '../helpers/specs';
import { scratchDir } from '../helpers/env';

requires('torch');

const REPO = path.join(__dirname, '..', '..');
/** The control's steps: a weak run (a little over half the public items); the patch that helps runs four times as many. */
const STEPS = 150;
const P = torchPatches();
const name = uniqueName('code-exp');
const loop = `${name}/inner/1`;
let h: LoopHarness;
let server: ChatServer;
let workers: LoopWorkers;
let worker: ChildProcess | undefined;
let proposerAsks = 0;
/** What the loop left, for the dashboard's test. */
let kept: { commit: string; parent: string; experimentId: string; score: number } | undefined;

const reply = (proposals: { params?: Record<string, unknown> | null; patch?: string | null; hypothesis: string }[]): ChatReply => ({
  content: JSON.stringify({
    proposals: proposals.map((p) => ({ params: p.params ?? null, patch: p.patch ?? null, hypothesis: p.hypothesis })),
  }),
});
/** The first batch's patches; the second's (asked again after the kill), then a repair that repeats the control. */
function script(r: ChatRequest): ChatReply {
  const n = proposerAsks++;
  if (n === 0)
    return reply([
      { patch: P.helps, hypothesis: 'more steps with a warm-up' },
      { patch: P.misfit, hypothesis: 'a patch written against another file' },
      { patch: P.outside, hypothesis: 'a wider model' },
      { patch: P.hurts, hypothesis: 'a gentler learning rate' },
    ]);
  const second = reply([
    { patch: P.helps, hypothesis: 'the warm-up again' },
    { patch: P.escape, hypothesis: 'look around first' },
  ]);
  // The second batch's first ask is answered late: the worker is killed while it waits.
  if (n === 1) return { delayMs: 60_000, reply: second };
  if (r.body.messages.length > 2) return reply([{ params: { lr: 0.01, steps: STEPS }, hypothesis: 'the same knobs' }]);
  return second;
}

const startWorker = (): ChildProcess =>
  spawn(process.execPath, [path.join(REPO, 'bin', 'flywheel.js'), 'worker', '--queue', 'orchestration'], {
    env: cliEnv(h, workers.prefix, { OPENAI_API_KEY: 'sk-test-code', OPENAI_BASE_URL: server.baseUrl, FLYWHEEL_TORCH_THREADS: '1' }),
    stdio: ['ignore', 'ignore', 'inherit'],
  });

beforeAll(async () => {
  process.env.FLYWHEEL_TORCH_THREADS = '1';
  h = await loopHarness('code_exp');
  server = await startChatServer(script);
  workers = await h.workers('code-exp', ['training', 'eval']);
  worker = startWorker();
}, 120_000);
afterAll(async () => {
  worker?.kill('SIGKILL');
  delete process.env.FLYWHEEL_TORCH_THREADS;
  await server?.close();
  await h?.close();
});

test('the patch that helps beats the weak control after real training and is kept as a new commit, the next batch runs on it, the one that hurts is reverted; refused ones carry their rule; the escape reads nothing; a worker kill loses and repeats nothing', async () => {
  const { task, heldoutPrompts } = await registerRecipeTask(h.db.db, h.home, scratchDir('code-exp-task'), `task-${name}`);
  const spec = torchRecipeSpec(name, torchRecipeFolder(scratchDir('code-exp-recipe')), {
    steps: STEPS,
    lr: 0.01,
    // A constant learning rate: the copy the task's `last` items ask for is learned at lr 0.01 between 150 and 400
    // steps with it (a cosine decay slows it past the sizes this test can afford).
    fixed: { lrSchedule: 'constant' },
    innerLoop: { budget: { experiments: 5, parallelism: 2 }, batchSize: 3, startupTrials: 1 },
    over: {
      goal: `goal of ${name}`,
      agents: { proposer: { model: 'code-model' } },
      task,
      selection: { metric: 'pass_rate', mode: 'max' },
      outerLoop: { promotion: { metric: 'pass_rate' } },
    },
  });
  const { versionId, spec: parsed } = await registerCampaignVersion(h.db.db, spec, undefined, h.home);
  const imported = parsed.trainer.recipe!.commit!;
  const handle = await h.client.workflow.start('innerLoop', {
    taskQueue: `${workers.prefix}-orchestration`,
    workflowId: loop,
    args: [{ campaignVersionId: versionId }],
  });
  await eventually('the second batch asked for', async () => (server.requests.length >= 2 ? true : undefined), 600_000);
  worker!.kill('SIGKILL');
  await new Promise((r) => worker!.once('exit', r));
  worker = startWorker();
  const result = await handle.result();
  expect(result).toMatchObject({ experiments: 5, stoppedBy: 'budget' });

  const rows = (await h.db.db.select().from(experiments).where(eq(experiments.innerLoopId, loop)).orderBy(asc(experiments.index))).filter(
    (r) => r.proposer !== 'baseline',
  );
  const patches = await h.db.db.select().from(recipePatches).where(eq(recipePatches.innerLoopId, loop)).orderBy(asc(recipePatches.id));
  const accepted = patches.filter((p) => p.status === 'accepted');
  // Nothing twice, nothing lost: three patches ran (helps, hurts, escape), each on one experiment of its own.
  expect(rows).toHaveLength(5);
  expect(accepted).toHaveLength(3);
  expect(new Set(accepted.map((p) => p.normalizedHash)).size).toBe(3);
  for (const p of accepted) expect(rows.filter((r) => r.id === p.experimentId && r.recipeCommit === p.commit)).toHaveLength(1);
  expect(patches.filter((p) => p.status === 'rejected').map((p) => p.reason!.split(':')[0])).toEqual(['apply', 'mutable', 'duplicate']);

  const helps = rows.find((r) => r.hypothesis.startsWith('more steps'))!;
  const hurts = rows.find((r) => r.hypothesis.startsWith('a gentler'))!;
  const escape = rows.find((r) => r.hypothesis.startsWith('look around'))!;
  const control = rows[0];
  expect(control.recipeCommit).toBe(imported);
  // Real public scores (pass rate, Flywheel's grader): the control passes a little over half the items, the patch that
  // helps nearly all of them, far more than the plateau's minDelta, and the one that hurts fewer than the control
  // (measured, twice alike: 0.700, 0.933, 0.500; the knobs-only run on the kept commit 0.967).
  expect(control.publicScore!).toBeGreaterThan(0);
  expect(helps.publicScore!).toBeGreaterThan(control.publicScore! + 0.1);
  expect(helps.publicScore!).toBeGreaterThan(control.publicScore! + parsed.innerLoop.plateau.minDelta);
  expect(hurts.publicScore!).toBeLessThan(control.publicScore!);
  // Kept: one new commit, the helpful patch's, its parent the import and its experiment the patch's; the hurtful
  // patch's commit is not kept.
  const keptRows = (await h.db.db.select().from(recipeCommits).where(eq(recipeCommits.campaignId, name))).filter((k) => k.keptAt);
  expect(keptRows.map((k) => [k.commit, k.parent, k.experimentId])).toEqual([[helps.recipeCommit, imported, helps.id]]);
  expect(keptRows.map((k) => k.commit)).not.toContain(hurts.recipeCommit);
  const best = helps.recipeCommit!;
  expect(best).not.toBe(imported);
  // The second batch ran on the kept commit: the escape was written against it (and made a commit of its own), the
  // knobs-only repair ran it as it is.
  expect(patches.find((p) => p.experimentId === escape.id)?.baseCommit).toBe(best);
  expect(escape.recipeCommit).not.toBe(best);
  expect(rows.filter((r) => r.index >= 3 && r.id !== escape.id).map((r) => r.recipeCommit)).toEqual([best]);
  // The loop's candidate for the outer loop is an experiment on the kept commit.
  expect(rows.find((r) => r.id === result.best?.experimentId)?.recipeCommit).toBe(best);
  kept = { commit: best, parent: imported, experimentId: helps.id, score: helps.publicScore! };

  // The escape read nothing and never scored.
  expect(escape.publicScore).toBeNull();
  if (sandboxAvailable) {
    expect(escape.status).toBe('failed');
    const [run] = await h.db.db.select().from(trainingRuns).where(eq(trainingRuns.experimentId, escape.id));
    expect(
      Object.values(JSON.parse(fs.readFileSync(path.join(run.runDir, 'stolen.json'), 'utf8')) as object).every((v) => v === null),
    ).toBe(true);
    expect(run.stderrTail).toContain('escape: read nothing outside the sandbox');
  }

  // What the proposer saw: the recipe, never a held-out item's text. Each held-out prompt (a word of random letters,
  // no other text holds it by chance) as it would appear inside the JSON message (escaped).
  const heldout = await h.db.db.select().from(evalItems).where(eq(evalItems.split, 'heldout'));
  expect(heldout.map((i) => i.prompt).sort()).toEqual([...heldoutPrompts].sort());
  const texts = heldoutPrompts.map((t) => JSON.stringify(t).slice(1, -1));
  for (const r of server.requests) expect(texts.filter((t) => r.body.messages[1].content.includes(t))).toEqual([]);
}, 900_000);

test("the dashboard shows the real loop's kept commit with its score in the campaign's recipe history, and the kept experiment's diff and parent", async () => {
  expect(kept).toBeDefined();
  const k = kept!;
  const dashboard = await startDashboard({ db: h.db.db, port: 0 });
  try {
    const get = async (page: string) => {
      const r = await fetch(dashboard.url + page);
      return { status: r.status, text: await r.text() };
    };
    const short = (commit: string) => `<code title="${commit}">${commit.slice(0, 12)}</code>`;
    const campaign = await get(`/campaigns/${encodeURIComponent(name)}`);
    expect(campaign.status).toBe(200);
    const history = /<table id="recipe-history">[\s\S]*?<tbody>([\s\S]*?)<\/tbody>/.exec(campaign.text)?.[1] ?? '';
    // Newest first: the kept commit (its parent the import, its public score, its experiment), then the import.
    const bodyRows = [...history.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]);
    expect(bodyRows).toHaveLength(2);
    expect(bodyRows[0]).toContain(short(k.commit));
    expect(bodyRows[0]).toContain(short(k.parent));
    expect(bodyRows[0]).toContain(`>${fmtNum(k.score)}<`);
    expect(bodyRows[0]).toContain(k.experimentId);
    expect(bodyRows[1]).toContain(short(k.parent));

    const experiment = await get(`/experiments/${encodeURIComponent(k.experimentId)}`);
    expect(experiment.status).toBe(200);
    const recipe = /<table id="recipe">([\s\S]*?)<\/table>/.exec(experiment.text)?.[1] ?? '';
    expect(recipe).toContain(`<tr><th>commit</th><td>${short(k.commit)}</td></tr>`);
    expect(recipe).toContain(`<tr><th>parent</th><td>${short(k.parent)}</td></tr>`);
    // The patch's added lines, escaped: model-written text never goes in as markup.
    expect(experiment.text).toContain(`<span class="add">+    p[&#39;steps&#39;] = p[&#39;steps&#39;] * 4</span>`);
    expect(experiment.text).toContain(
      `<span class="add">+    p[&#39;lrWarmup&#39;] = max(p[&#39;lrWarmup&#39;], p[&#39;steps&#39;] // 10)</span>`,
    );
  } finally {
    await dashboard.close();
  }
}, 60_000);
