// Code experiments end to end (issue 37): an inner loop on the reference PyTorch trainer imported as a recipe
// (train.py mutable), its proposer a scripted Chat Completions server on 127.0.0.1 returning real patches: one that
// helps (four times the steps with a warm-up), one that hurts (a learning rate a hundred times smaller), one that does
// not apply, one outside `mutable`, a duplicate, and one that tries to read outside its sandbox. Real Temporal,
// PostgreSQL, python3 training tiny models on the CPU and Flywheel's grader on the public split. The orchestration
// worker (workflows and the proposer activity) runs as a process that is SIGKILLed while the second batch's proposal
// is in flight and started again: no patch is applied twice, none is lost.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { and, asc, eq } from 'drizzle-orm';
import { evalItems, experiments, recipeCommits, recipePatches, trainingRuns } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { startChatServer, type ChatReply, type ChatRequest, type ChatServer } from '../helpers/chat-server';
import { cliEnv } from '../helpers/cli';
import { eventually, loopHarness, type LoopHarness, type LoopWorkers } from '../helpers/loop-harness';
import { torchPatches, torchRecipeFolder, torchRecipeSpec } from '../helpers/recipe-patches';
import { requires } from '../helpers/requires';
import { sandboxAvailable } from '../helpers/sandbox';
import { uniqueName } from '../helpers/specs';
import { scratchDir } from '../helpers/env';

requires('torch');

const REPO = path.join(__dirname, '..', '..');
const P = torchPatches();
const name = uniqueName('code-exp');
const loop = `${name}/inner/1`;
let h: LoopHarness;
let server: ChatServer;
let workers: LoopWorkers;
let worker: ChildProcess | undefined;
let proposerAsks = 0;

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
  if (r.body.messages.length > 2) return reply([{ params: { lr: 0.01, steps: 50 }, hypothesis: 'the same knobs' }]);
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

test('patches run on their own commits and are kept or reverted by the rule on real scores; refused ones carry their rule; the escape reads nothing; a worker kill loses and repeats nothing', async () => {
  const spec = torchRecipeSpec(name, torchRecipeFolder(scratchDir('code-exp-recipe')), {
    steps: 50,
    lr: 0.01,
    innerLoop: { budget: { experiments: 5, parallelism: 2 }, batchSize: 3, startupTrials: 1 },
    over: {
      goal: `goal of ${name}`,
      agents: { proposer: { model: 'code-model' } },
      task: { kind: 'builtin-code', completionItems: 60, lossItems: 5 },
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
  // Kept or reverted by the rule, on the real public scores: the winner (if it beat the control) is the one kept
  // commit, its parent the import, and the second batch ran on the best commit. At this size (a one-layer, 32-wide
  // model, 50 steps; ×4 with the patch) every run scores exact_match 0 on this CPU, so the patch that helps the loss
  // does not beat the control on the public metric and is reverted: code-patches.test.ts shows the keep with scores
  // written by the test.
  const kept = (await h.db.db.select().from(recipeCommits).where(eq(recipeCommits.campaignId, name))).filter((k) => k.keptAt);
  const won = helps.publicScore! > control.publicScore! + parsed.innerLoop.plateau.minDelta;
  expect(kept.map((k) => [k.commit, k.parent, k.experimentId])).toEqual(won ? [[helps.recipeCommit, imported, helps.id]] : []);
  const best = won ? helps.recipeCommit : imported;
  expect(escape.recipeCommit).not.toBe(best);
  expect(rows.filter((r) => r.index >= 3 && r.id !== escape.id).map((r) => r.recipeCommit)).toEqual([best]);
  expect(hurts.publicScore!).toBeLessThanOrEqual(control.publicScore!);
  // The loop's candidate for the outer loop is an experiment on the best kept commit.
  expect(rows.find((r) => r.id === result.best?.experimentId)?.recipeCommit).toBe(best);

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

  // What the proposer saw: the recipe, never a held-out item's text.
  const heldout = await h.db.db
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.split, 'heldout')));
  expect(heldout.length).toBeGreaterThan(0);
  // Each text as it would appear inside the JSON message (escaped), where long enough to mean anything.
  const texts = heldout
    .flatMap((i) => [i.prompt, i.reference])
    .filter((t) => t.length >= 20)
    .map((t) => JSON.stringify(t).slice(1, -1));
  expect(texts.length).toBeGreaterThan(0);
  for (const r of server.requests) expect(texts.filter((t) => r.body.messages[1].content.includes(t))).toEqual([]);
}, 900_000);
