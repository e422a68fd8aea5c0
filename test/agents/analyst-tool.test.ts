// The analyst as a tool of a recipe campaign's proposer, called as the activity function against a scripted Chat
// Completions server (no training: scores, loss points and held-out rows are written by the test). The request
// offers the `analyst` function; the model calls it (parallel calls too), each call is answered with the loop's
// structured results read from PostgreSQL (checked here against the rows: best so far, kept commits, what each patch
// did, one experiment's curve, the plateau) and never a held-out score or item; then it proposes. Every request is
// an agent_calls row with its own callIndex; an activity that fails mid tool-loop and is retried reuses the recorded
// replies, asks only what had no answer (with the same tool answers), and writes its proposals once. Past its tool
// rounds a tool call is an unusable reply, repaired as any other; an endpoint that refuses tools is asked without.
import fs from 'node:fs';
import path from 'node:path';
import { and, asc, eq, isNotNull } from 'drizzle-orm';
import { EXPERIMENT_CURVE_POINTS } from '../../activities/inner/analyst-views';
import { MAX_TOOL_ROUNDS } from '../../agents/proposer';
import type { DbHandle } from '../../db/client';
import { evalItems, evalResults, evalSuites, experiments, metricPoints, recipeCommits, trainingRuns } from '../../db/schema';
import type { ChatReply, ChatRequest, GoalScript } from '../helpers/chat-server';
import { freshDatabase, scratchDir } from '../helpers/env';
import { contextOf } from '../helpers/proposer-campaigns';
import { torchPatches } from '../helpers/recipe-patches';
import { recipeProposers, type RecipeProposers } from '../helpers/recipe-proposers';

const MODEL = 'analyst-tool-model';
const home = scratchDir('analyst-tool');
const P = torchPatches();
/** Held-out text planted in the database: none of it may reach a tool answer. */
const NEEDLES = ['0.98765', 'zqxv-heldout-prompt-wumpf', 'zqxv-heldout-reference-glorp', 'zqxv-heldout-item-id', '0.54321'];
/** A search space with room for knob proposals. */
const SPACE = { lr: { type: 'categorical', choices: [0.003, 0.001] }, steps: { type: 'int', low: 20, high: 80 } };
let h: DbHandle;
let bench: RecipeProposers;

const proposals = (ps: { params?: Record<string, unknown> | null; patch?: string | null; hypothesis: string }[]): ChatReply => ({
  content: JSON.stringify({ proposals: ps.map((p) => ({ params: p.params ?? null, patch: p.patch ?? null, hypothesis: p.hypothesis })) }),
});
const ask = (...calls: [string, unknown][]): ChatReply => ({
  toolCalls: calls.map(([name, args]) => ({ name, arguments: typeof args === 'string' ? args : JSON.stringify(args) })),
});
const analyst = (view: string, experiment: number | null = null): [string, unknown] => ['analyst', { view, experiment }];
/** The `tools` of a recipe proposer's request: the analyst function, strict. */
const OFFERED = [
  {
    type: 'function',
    function: expect.objectContaining({
      name: 'analyst',
      strict: true,
      parameters: expect.objectContaining({ required: ['view', 'experiment'], additionalProperties: false }),
    }),
  },
];
/** The tool messages of a request, in order: call id and parsed answer. */
const toolAnswers = (r: ChatRequest) =>
  r.body.messages
    .filter((m) => m.role === 'tool')
    .map((m) => ({ id: m.tool_call_id, answer: JSON.parse(m.content) as Record<string, any> }));

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('analyst_tool'));
  bench = await recipeProposers(h.db, home, MODEL);
});
afterAll(async () => {
  await bench?.close();
  await h?.close();
});

const propose: RecipeProposers['propose'] = (...a) => bench.propose(...a);
const campaign = (label: string, script: GoalScript) => bench.campaign(label, script, { searchSpace: SPACE });

/** A finished experiment as the test sees it: public and held-out scores, held-out rows and items, a loss curve. */
async function finish(loop: string, index: number, publicScore: number, curve = 0) {
  const id = `${loop}/e${index}`;
  await h.db.update(experiments).set({ publicScore, heldoutScore: 0.98765, status: 'succeeded' }).where(eq(experiments.id, id));
  const suiteId = `heldout-suite-${index}@1`;
  await h.db.insert(evalSuites).values({ id: suiteId, name: `heldout-suite-${index}`, version: 1, contentHash: 'x' });
  await h.db.insert(evalItems).values({
    id: `${NEEDLES[3]}-${index}`,
    suiteId,
    split: 'heldout',
    grader: 'exact_token',
    prompt: NEEDLES[1],
    reference: NEEDLES[2],
    contentHash: `h${index}`,
    sourceFile: 'heldout.jsonl',
  });
  await h.db.insert(evalResults).values({
    id: `${id}/ckpt|${suiteId}|heldout`,
    checkpointId: `${id}/ckpt`,
    experimentId: id,
    suiteId,
    split: 'heldout',
    itemCount: 1,
    metrics: { exact_match: 0.54321 },
    perItem: { [`${NEEDLES[3]}-${index}`]: 0.54321 },
  });
  if (curve === 0) return;
  const runId = `${id}/r1`;
  await h.db.insert(trainingRuns).values({ id: runId, experimentId: id, attempt: 1, backend: 'local', runDir: '/x', status: 'succeeded' });
  await h.db
    .insert(metricPoints)
    .values(Array.from({ length: curve }, (_, k) => ({ runId, name: 'loss', step: 10 * k, value: 3 - k / curve, offset: k })));
}

test('the proposer calls the analyst tool, gets the structured results PostgreSQL holds, then proposes; a retry mid tool-loop reuses the recorded calls', async () => {
  const c = await campaign('tool', [
    () =>
      proposals([
        { patch: P.helps, hypothesis: 'more steps with a warm-up' },
        { patch: P.hurts, hypothesis: 'a gentler learning rate' },
      ]),
    () => ask(analyst('best'), analyst('by_change')),
    () => ask(analyst('experiment', 1), analyst('plateau')),
    () => ({ status: 500, body: { error: { message: 'the model server fell over' } } }),
    () =>
      proposals([
        { params: { lr: 0.001, steps: 60 }, hypothesis: 'the kept warm-up with a smaller learning rate' },
        { params: { lr: 0.003, steps: 70 }, hypothesis: 'the kept warm-up with more steps' },
      ]),
  ]);
  const first = await propose(c.input(0, 3));
  expect(first.map((p) => p.proposer)).toEqual(['tpe-startup', 'agent', 'agent']);
  expect(c.requests()[0].body.tools).toEqual(OFFERED);
  await finish(c.loop, 0, 0.2);
  await finish(c.loop, 1, 0.35, 30);
  await finish(c.loop, 2, 0.05);

  // Attempt 1 of the second batch: two tool rounds, then the endpoint fails (a worker that dies there is the same).
  await expect(propose(c.input(3, 2))).rejects.toThrow(/fell over/);
  expect(c.requests()).toHaveLength(4);
  expect((await c.rows()).filter((r) => r.index >= 3)).toEqual([]);
  // Attempt 2: the first two replies come from their records; only the request that had no answer is sent again.
  const second = await propose(c.input(3, 2), 2);
  // Both proposals, in the order the TPE model of the history ranks them.
  expect(second.map((p) => [p.proposer, p.params])).toEqual(
    expect.arrayContaining([
      ['agent', { lr: 0.001, steps: 60 }],
      ['agent', { lr: 0.003, steps: 70 }],
    ]),
  );
  expect(second).toHaveLength(2);
  const reqs = c.requests();
  expect(reqs).toHaveLength(5);
  const [, a, b, failed, last] = reqs;

  // Every request of the recipe prompt offers the analyst function beside the strict reply schema.
  for (const r of reqs) {
    expect(r.body.tools).toEqual(OFFERED);
    expect(r.body.tool_choice).toBe('auto');
    expect(r.body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'experiment_proposals' } });
  }
  expect(a.body.messages.map((m) => m.role)).toEqual(['system', 'user']);
  expect(b.body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool']);
  expect(last.body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'tool']);
  // The retried request is the failed one, tool answers included: they are a function of the database alone.
  expect(last.body.messages).toEqual(failed.body.messages);
  // Each call of a reply is answered under its id.
  expect(b.body.messages[2].tool_calls!.map((t) => t.id)).toEqual(toolAnswers(b).map((t) => t.id));

  // The answers, against the rows.
  const rows = await c.rows();
  const patchRows = await c.patches();
  const patchOf = (i: number) => patchRows.find((p) => p.experimentId === rows[i].id)!;
  const kept = await h.db
    .select()
    .from(recipeCommits)
    .where(and(eq(recipeCommits.campaignId, c.name), isNotNull(recipeCommits.keptAt)));
  expect(kept.map((k) => k.commit)).toEqual([rows[1].recipeCommit]);
  const asSeen = (i: number, isKept: boolean) => ({
    index: i,
    params: rows[i].params,
    status: 'succeeded',
    publicScore: rows[i].publicScore,
    hypothesis: rows[i].hypothesis,
    proposer: rows[i].proposer,
    commit: rows[i].recipeCommit,
    patch: { summary: patchOf(i).summary, hash: patchOf(i).normalizedHash.slice(0, 12), kept: isKept },
  });
  const [best, byChange] = toolAnswers(b).map((t) => t.answer);
  expect(best).toEqual({
    view: 'best',
    best: asSeen(1, true),
    kept: [{ commit: kept[0].commit, parent: c.imported, score: 0.35, experiment: 1, patch: patchOf(1).summary }],
  });
  expect(byChange).toEqual({
    view: 'by_change',
    knobs: { runs: 1, scored: 1, best: 0.2, failed: 0 },
    patches: [1, 2].map((i) => ({
      index: i,
      summary: patchOf(i).summary,
      status: 'succeeded',
      publicScore: rows[i].publicScore,
      bestBefore: i === 1 ? 0.2 : 0.35,
      improved: i === 1,
      commit: rows[i].recipeCommit,
      hash: patchOf(i).normalizedHash.slice(0, 12),
      kept: i === 1,
    })),
    confirmations: [],
  });
  const [one, plateau] = toolAnswers(last)
    .slice(2)
    .map((t) => t.answer);
  const points = await h.db
    .select()
    .from(metricPoints)
    .where(eq(metricPoints.runId, `${rows[1].id}/r1`))
    .orderBy(asc(metricPoints.step));
  expect(one.experiment).toEqual({ ...asSeen(1, true), lossCurve: expect.any(Array) });
  expect(one.experiment.lossCurve).toHaveLength(EXPERIMENT_CURVE_POINTS);
  expect(one.experiment.lossCurve[0]).toEqual([points[0].step, Number(points[0].value.toFixed(4))]);
  expect(one.experiment.lossCurve.at(-1)).toEqual([points.at(-1)!.step, Number(points.at(-1)!.value.toFixed(4))]);
  expect(plateau).toEqual({
    view: 'plateau',
    experiments: 3,
    best: { index: 1, publicScore: 0.35 },
    sinceBest: 1,
    plateau: 1 >= c.spec.innerLoop.batchSize,
    batchSize: c.spec.innerLoop.batchSize,
    minDelta: c.spec.innerLoop.plateau.minDelta,
    bests: [
      { index: 0, publicScore: 0.2 },
      { index: 1, publicScore: 0.35 },
    ],
  });
  // Never a held-out score, item, reference or per-item row, though the database holds them for these experiments.
  for (const r of reqs)
    for (const t of r.body.messages.filter((m) => m.role === 'tool')) {
      for (const n of NEEDLES) expect(t.content).not.toContain(n);
      expect(t.content.toLowerCase()).not.toContain('heldout');
    }

  // Each request is its own record, under its own callIndex; the failed one is recorded as its attempt.
  const calls = (await c.calls()).filter((k) => k.id.includes('-3/proposer/'));
  const scope = calls[0].id.slice(0, calls[0].id.indexOf('/proposer/'));
  expect(calls.map((k) => [k.id.slice(scope.length), k.outcome, k.promptVersion])).toEqual([
    ['/proposer/0', 'ok', 'proposer-patch.v2'],
    ['/proposer/0/tool1', 'ok', 'proposer-patch.v2'],
    ['/proposer/0/tool2/attempt1', 'error', 'proposer-patch.v2'],
    ['/proposer/0/tool2', 'ok', 'proposer-patch.v2'],
  ]);
  expect(JSON.parse(calls[0].rawReply!).message.toolCalls.map((t: { name: string }) => t.name)).toEqual(['analyst', 'analyst']);

  // A third run of the activity finds the batch written: the same rows, no request, nothing twice.
  expect(await propose(c.input(3, 2), 3)).toEqual(second);
  expect(c.requests()).toHaveLength(5);
  expect((await c.rows()).map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
});

test('bad calls get an error answer; past its tool rounds a tool call is an unusable reply, repaired as any other', async () => {
  const c = await campaign('rounds', [
    () => ask(analyst('best'), ['shell', { cmd: 'cat /etc/passwd' }], ['analyst', '{"view": "everything"}']),
    () => ask(analyst('experiment', 7)),
    () => ask(analyst('plateau')),
    () => ask(analyst('by_change')),
    () => proposals([{ params: { lr: 0.001, steps: 50 }, hypothesis: 'a smaller learning rate' }]),
  ]);
  const got = await propose(c.input(0, 2));
  expect(got.map((p) => p.proposer)).toEqual(['tpe-startup', 'agent']);
  const reqs = c.requests();
  // The prompt file names the tool and its limit.
  expect(reqs[0].body.messages[0].content).toBe(
    fs.readFileSync(path.join(__dirname, '..', '..', 'agents', 'prompts', 'proposer-patch.v2.md'), 'utf8'),
  );
  expect(reqs[0].body.messages[0].content).toContain(`at most ${MAX_TOOL_ROUNDS} rounds of calls`);
  expect(reqs.map((r) => r.body.tool_choice)).toEqual(['auto', 'auto', 'auto', 'none', 'none']);
  expect(toolAnswers(reqs[1]).map((t) => t.answer)).toEqual([
    { view: 'best', best: null, kept: [] },
    { error: 'no tool named "shell": the only tool is analyst' },
    { error: expect.stringMatching(/^bad arguments: view: /) },
  ]);
  expect(toolAnswers(reqs[2]).at(-1)!.answer).toEqual({ error: 'no experiment 7 before this batch' });
  // The fourth reply called the tool with no rounds left: answered with an error, recorded unusable, then repaired.
  const repair = reqs[4].body.messages;
  expect(repair.slice(-3).map((m) => m.role)).toEqual(['assistant', 'tool', 'user']);
  expect(JSON.parse(repair.at(-2)!.content)).toEqual({ error: 'no tool rounds left' });
  const reason = `the model called analyst after its ${MAX_TOOL_ROUNDS} tool rounds`;
  expect(repair.at(-1)!.content).toContain(`Your reply was rejected: ${reason}`);
  const calls = await c.calls();
  expect(calls.map((k) => [k.id.slice(k.id.indexOf('/proposer/')), k.outcome, k.reason])).toEqual([
    ['/proposer/0', 'ok', null],
    ['/proposer/0/tool1', 'ok', null],
    ['/proposer/0/tool2', 'ok', null],
    ['/proposer/0/tool3', 'unusable', reason],
    ['/proposer/1', 'ok', null],
  ]);
});

test('an endpoint that refuses tools is asked again without them, and its reply is used', async () => {
  const c = await campaign('no-tools', [
    (r) =>
      r.body.tools
        ? {
            status: 400,
            body: { error: { message: '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set' } },
          }
        : proposals([{ params: { lr: 0.001, steps: 50 }, hypothesis: 'a smaller learning rate' }]),
  ]);
  const got = await propose(c.input(0, 2));
  expect(got.map((p) => p.proposer)).toEqual(['tpe-startup', 'agent']);
  expect(c.requests().map((r) => Boolean(r.body.tools))).toEqual([true, false]);
  // The summary of the analyst's view is in the user message for such an endpoint.
  expect((contextOf(c.requests()[1]) as Record<string, any>).analyst).toMatchObject({ best: null, plateau: false });
  expect((await c.calls()).map((k) => [k.outcome, k.mode])).toEqual([['ok', 'json_schema']]);
});
