// A recipe campaign's proposer, called as the activity function against a scripted Chat Completions server that
// returns real patches to the reference PyTorch trainer's train.py (test/helpers/recipe-patches.ts): accepted patches
// become experiments on their own recipe commits beside a control on the imported commit; a patch that does not
// apply, one outside `mutable` and a duplicate are recorded as rejected with the rule that refused them and the sampler
// fills their places; the next batch keeps the winner as a commit whose parent is the import, reverts the loser and is
// proposed against the new best; a retried activity writes nothing twice; `confirmSeeds` reruns a promising patch
// before it is kept; the gate's seed reruns of a patched candidate run its commit. Scores are written by the test
// here: the loop with real training is code-experiments.test.ts.
import { eq } from 'drizzle-orm';
import { CONFIRM_PROPOSER } from '../../activities/inner/recipe-round';
import { planSeedReruns, SEED_RERUN_PROPOSER } from '../../activities/outer/plan-seed-reruns';
import { BASELINE_PROPOSER } from '../../contracts/experiment';
import type { DbHandle } from '../../db/client';
import { checkpoints, experiments, recipeCommits } from '../../db/schema';
import { experimentsByIds } from '../../services/inner-loops';
import { recordPatch } from '../../services/recipes/recipe-patches';
import { recipeFiles } from '../../services/recipes/recipe-files';
import type { ChatReply, ChatRequest, GoalScript } from '../helpers/chat-server';
import { freshDatabase, scratchDir } from '../helpers/env';
import { recipeProposers, type RecipeProposers } from '../helpers/recipe-proposers';
import { torchPatches } from '../helpers/recipe-patches';

const MODEL = 'patch-model';
const home = scratchDir('code-patches');
const P = torchPatches();
let h: DbHandle;
let rp: RecipeProposers;
const ctx = (r: ChatRequest) => JSON.parse(r.body.messages[1].content) as Record<string, any>;

const reply = (proposals: { params?: Record<string, unknown> | null; patch?: string | null; hypothesis: string }[]): ChatReply => ({
  content: JSON.stringify({
    proposals: proposals.map((p) => ({ params: p.params ?? null, patch: p.patch ?? null, hypothesis: p.hypothesis })),
  }),
});

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('code_patches'));
  rp = await recipeProposers(h.db, home, MODEL);
});
afterAll(async () => {
  await rp?.close();
  await h?.close();
});

const deps = () => rp.deps();
const propose = (input: Parameters<RecipeProposers['propose']>[0]) => rp.propose(input);

/** A recipe campaign answered by `script`, with `score` writing an experiment's public score as training would. */
async function campaign(label: string, script: GoalScript, confirmSeeds = 0, searchSpace?: Record<string, unknown>) {
  const c = await rp.campaign(label, script, { confirmSeeds, searchSpace });
  const score = async (index: number, s: number | null, status = 'succeeded') =>
    h.db
      .update(experiments)
      .set({ publicScore: s, heldoutScore: 0.98765, status })
      .where(eq(experiments.id, `${c.loop}/e${index}`));
  return { ...c, score };
}

test('patches become experiments on their commits beside a control; refused ones are recorded with their rule; the winner is kept and the next batch builds on it', async () => {
  const c = await campaign('patches', [
    () =>
      reply([
        { patch: P.helps, hypothesis: 'more steps with a warm-up' },
        { patch: P.misfit, hypothesis: 'a patch against another file' },
        { patch: P.outside, hypothesis: 'a wider model' },
        { patch: P.hurts, hypothesis: 'a gentler learning rate' },
      ]),
    () =>
      reply([
        { patch: P.helps, hypothesis: 'the warm-up again' },
        { patch: P.escape, hypothesis: 'look around' },
      ]),
    () => reply([{ params: { lr: 0.003, steps: 40 }, hypothesis: 'the same knobs' }]),
  ]);

  const first = await propose(c.input(0, 3));
  expect(first.map((p) => p.proposer)).toEqual(['tpe-startup', 'agent', 'agent']);
  let rows = await c.rows();
  const [control, helps, hurts] = rows;
  expect(control.recipeCommit).toBe(c.imported);
  expect(control.hypothesis).toContain('the control run of recipe');
  expect(helps.recipeCommit).not.toBe(c.imported);
  expect(hurts.recipeCommit).not.toBe(helps.recipeCommit);
  // Each patch experiment runs with the control's knobs: the code is the only difference.
  expect(helps.params).toEqual(control.params);
  expect(recipeFiles(home, c.name, helps.recipeCommit!, ['train.py'])['train.py']).toContain("p['steps'] = p['steps'] * 4");

  let patches = await c.patches();
  expect(patches.map((p) => [p.status, p.experimentId, p.proposer])).toEqual([
    ['accepted', helps.id, `agent:${MODEL}`],
    ['rejected', null, `agent:${MODEL}`],
    ['rejected', null, `agent:${MODEL}`],
    ['accepted', hurts.id, `agent:${MODEL}`],
  ]);
  expect(patches[1].reason).toMatch(/^apply: the patch does not apply/);
  expect(patches[2].reason).toBe('mutable: the patch touches model.py, which is not in trainer.recipe.mutable');
  for (const p of [patches[0], patches[3]]) expect(p.commit).toBe(rows.find((r) => r.id === p.experimentId)!.recipeCommit);

  // The request: the recipe prompt, the mutable file of the imported commit, nothing held out.
  const [req] = c.requests();
  expect(req.body.messages[0].content).toContain('whose training code you may change');
  const sent = ctx(req);
  expect(sent.recipe).toMatchObject({ bestCommit: c.imported, mutable: ['train.py'], tried: [] });
  expect(Object.keys(sent.recipe.files)).toEqual(['train.py']);
  expect(req.body.messages[1].content.toLowerCase()).not.toContain('heldout');

  // A retry of the activity returns the same rows, asks nothing and records no patch twice.
  expect(await propose(c.input(0, 3))).toEqual(first);
  expect(c.requests()).toHaveLength(1);
  expect(await c.patches()).toHaveLength(4);

  // Results: the patch that helps beats the control, the one that hurts loses.
  await c.score(0, 0.2);
  await c.score(1, 0.35);
  await c.score(2, 0.05);
  const second = await propose(c.input(3, 2));
  const kept = await h.db.select().from(recipeCommits).where(eq(recipeCommits.campaignId, c.name));
  const keptRow = kept.find((k) => k.keptAt !== null && k.commit === helps.recipeCommit)!;
  expect(keptRow).toMatchObject({ parent: c.imported, experimentId: helps.id, keptScore: 0.35, origin: 'patch' });
  expect(kept.filter((k) => k.keptAt !== null).map((k) => k.commit)).toEqual([helps.recipeCommit]);

  // The second batch was proposed against the kept commit: its files, the tried list; the duplicate was refused, the
  // escape attempt applies on the new commit; the repair's knob proposal repeats the control (the space has one point)
  // and is refused too, so the sampler fills the other place: the loop never stalls.
  const reqs = c.requests();
  const next = ctx(reqs[1]);
  expect(next.recipe.bestCommit).toBe(helps.recipeCommit);
  expect(next.recipe.files['train.py']).toContain("p['steps'] = p['steps'] * 4");
  // Refusals are recorded as they happen, accepted patches with their experiments: in that order.
  expect(next.recipe.tried.map((t: { status: string }) => t.status)).toEqual(['rejected', 'rejected', 'accepted', 'accepted']);
  expect(next.leaderboard.find((e: { index: number }) => e.index === 1).patch.summary).toMatch(/^train\.py \+\d+ -0$/);
  expect(next.analyst).toMatchObject({ best: { index: 1, publicScore: 0.35 }, knobs: { runs: 1, scored: 1, best: 0.2 } });
  expect(reqs[2].body.messages[3].content).toContain('patch rejected: duplicate: the same change was tried before');
  rows = await c.rows();
  expect(second.map((p) => p.proposer)).toEqual(['agent', expect.stringMatching(/^tpe/)]);
  expect(rows[3].recipeCommit).not.toBe(helps.recipeCommit);
  expect(rows[4].recipeCommit).toBe(helps.recipeCommit);
  patches = await c.patches();
  expect(patches.filter((p) => p.status === 'rejected').map((p) => p.reason!.split(':')[0])).toEqual(['apply', 'mutable', 'duplicate']);
  expect(new Set(patches.filter((p) => p.status === 'accepted').map((p) => p.normalizedHash)).size).toBe(3);
});

test('confirmSeeds: a patch that beats the best is rerun with other seeds and reverted when its mean does not', async () => {
  const c = await campaign(
    'confirm',
    [
      () => reply([{ patch: P.helps, hypothesis: 'more steps' }]),
      () => reply([{ params: { lr: 0.003, steps: 40 }, hypothesis: 'knobs only' }]),
    ],
    2,
  );
  await propose(c.input(0, 2));
  await c.score(0, 0.2);
  await c.score(1, 0.4); // lucky
  const second = await propose(c.input(2, 2));
  expect(second.map((p) => p.proposer)).toEqual([CONFIRM_PROPOSER, CONFIRM_PROPOSER]);
  const rows = await c.rows();
  expect(rows.slice(2).map((r) => [r.recipeCommit, r.params])).toEqual([
    [rows[1].recipeCommit, rows[1].params],
    [rows[1].recipeCommit, rows[1].params],
  ]);
  expect((await h.db.select().from(recipeCommits).where(eq(recipeCommits.campaignId, c.name))).filter((k) => k.keptAt)).toEqual([]);
  await c.score(2, 0.1);
  await c.score(3, 0.1); // mean 0.2: not better than the control
  await propose(c.input(4, 1));
  expect((await h.db.select().from(recipeCommits).where(eq(recipeCommits.campaignId, c.name))).filter((k) => k.keptAt)).toEqual([]);
  const after = await c.rows();
  expect(after[4].recipeCommit).toBe(c.imported);
});

test("the gate's seed reruns of a patched candidate run the candidate's own recipe commit", async () => {
  const c = await campaign('reruns', [() => reply([{ patch: P.helps, hypothesis: 'more steps' }])]);
  await propose(c.input(0, 2));
  const [, patched] = await c.rows();
  expect(patched.recipeCommit).not.toBe(c.imported);
  // The incumbent is the untrained baseline (so the candidate's recipe is rerun); both have a checkpoint. The format
  // is not the builtin reference trainer's and the baseline pins the same trainer: the reruns run the candidate's own.
  const baseline = `${c.name}/inner/0/e0`;
  await h.db.insert(experiments).values({
    id: baseline,
    campaignId: c.name,
    innerLoopId: c.loop,
    campaignVersionId: patched.campaignVersionId,
    index: 99,
    datasetVersionId: 'v',
    params: patched.params,
    hypothesis: 'baseline',
    proposer: BASELINE_PROPOSER,
    status: 'succeeded',
  });
  const ckpt = (experimentId: string) => ({
    id: `${experimentId}/r/step-1`,
    runId: `${experimentId}/r`,
    experimentId,
    step: 1,
    path: '/x',
    sha256: 'x',
    format: 'torch-test',
  });
  await h.db.insert(checkpoints).values([ckpt(baseline), ckpt(patched.id)]);
  const plan = await planSeedReruns(deps(), {
    campaignId: c.name,
    campaignVersionId: patched.campaignVersionId!,
    datasetVersionId: 'v',
    incumbentCheckpointId: ckpt(baseline).id,
    candidateCheckpointId: ckpt(patched.id).id,
    seeds: 2,
  });
  expect(plan.reference).toMatch(/^blind/);
  const reruns = await experimentsByIds(h.db, plan.toRun);
  expect(reruns.map((r) => [r.proposer, r.params, r.recipeCommit])).toEqual([
    [SEED_RERUN_PROPOSER, patched.params, patched.recipeCommit],
    [SEED_RERUN_PROPOSER, patched.params, patched.recipeCommit],
  ]);
});

test("a researcher's queued patch runs with its --params over the best's knobs; values the space no longer allows are refused", async () => {
  const c = await campaign('params', [() => reply([{ params: { lr: 0.003, steps: 50 }, hypothesis: 'knobs only' }])], 0, {
    lr: { type: 'categorical', choices: [0.003, 0.001] },
    steps: { type: 'int', low: 20, high: 80 },
  });
  const queue = (id: string, patch: string, params: Record<string, number> | null) =>
    recordPatch(h.db, {
      id: `${c.loop}/researcher/${id}`,
      campaignId: c.name,
      innerLoopId: c.loop,
      baseCommit: c.imported,
      diff: patch,
      normalizedHash: id,
      proposer: 'researcher:ada',
      params,
      status: 'queued',
    });
  await queue('a', P.helps, { steps: 77 });
  // Stored before the space changed, say: the batch rechecks it and refuses it with the knob's reason.
  await queue('b', P.hurts, { lr: 0.5 });
  const got = await propose(c.input(0, 3));
  expect(got.map((p) => p.proposer)).toEqual(['tpe-startup', 'researcher:ada', 'agent']);
  const [control, mine] = await c.rows();
  expect(control.params.steps).not.toBe(77);
  expect(mine.params).toEqual({ ...control.params, steps: 77 });
  expect(mine.recipeCommit).not.toBe(c.imported);
  const rows = await c.patches();
  expect(rows.map((p) => [p.id.split('/').pop(), p.status, p.experimentId, p.params, p.reason])).toEqual([
    ['a', 'accepted', mine.id, { steps: 77 }, null],
    ['b', 'rejected', null, { lr: 0.5 }, 'params: lr: 0.5 is not one of 0.003, 0.001'],
  ]);
});
