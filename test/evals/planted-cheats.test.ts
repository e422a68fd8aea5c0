// Planted cheats for the built-in task, each caught, and an honest recipe promoted in the same run. Real parts: the
// built-in suite with its probes (prepareTask), real charlm checkpoints, the recipes' own `predict` programs run by
// scoreCheckpoint, the contamination check and the gate's decision rows. Dataset cheats (training on public items,
// a canary in the data) are refused before training; output cheats (memorised references, a tampered test grader)
// are rejected by the gate, each by its rule.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { and, eq } from 'drizzle-orm';
import { prepareTask } from '../../activities/builtin-task/prepare-task';
import { registerCampaign } from '../../activities/campaign/register-campaign';
import { checkContamination } from '../../activities/eval/check-contamination';
import { scoreCheckpoint, type EvalSplit } from '../../activities/eval/score-checkpoint';
import { evaluateGate } from '../../activities/outer/evaluate-gate';
import type { ActivityDeps } from '../../activities/deps';
import { ContaminatedDatasetError } from '../../core/errors';
import type { DbHandle } from '../../db/client';
import { checkpoints, datasets, datasetVersions, decisions, evalItems, evalSuites, examples, experiments } from '../../db/schema';
import { trainCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

const CHEATS = path.join(__dirname, '..', '..', 'infra', 'trainers', 'cheats', 'main.ts');
const RUN_TS = path.join(__dirname, '..', '..', 'bin', 'run-ts.js');
const home = scratchDir('planted-cheats');
const leakFile = path.join(home, 'leak.json');
let h: DbHandle;
let dbUrl: string;
let deps: ActivityDeps;
let suiteId: string;
let baseVersionId: string;
const prefix = uniqueName('cheat');

const recipeCommand = (recipe: string) => [process.execPath, RUN_TS, CHEATS, recipe, leakFile];
const run = <A extends unknown[], R>(fn: (...a: A) => Promise<R>, ...args: A): Promise<R> =>
  new MockActivityEnvironment({ heartbeatTimeoutMs: 60_000 }).run(fn, ...args);

/** A campaign whose trainer is `recipe`, with one experiment holding a copy of `file`'s checkpoint. */
async function candidateOf(recipe: string, file: { path: string; sha256: string }): Promise<string> {
  const campaignId = `${prefix}-${recipe}`;
  await registerCampaign(h.db, { campaignId, spec: fastBuiltinSpec(campaignId, { trainer: { command: recipeCommand(recipe) } } as never) });
  const experimentId = `${campaignId}/e1`;
  await h.db.insert(experiments).values({ id: experimentId, campaignId, innerLoopId: `${campaignId}/inner`, index: 1, datasetVersionId: baseVersionId, params: { recipe }, proposer: 'test', status: 'succeeded' });
  const id = `${experimentId}/r1/step-300`;
  await h.db.insert(checkpoints).values({ id, runId: `${experimentId}/r1`, experimentId, step: 300, path: file.path, sha256: file.sha256, format: 'charlm-v1' });
  return id;
}

async function scoreAll(checkpointId: string): Promise<void> {
  for (const split of ['public', 'heldout', 'probe'] as EvalSplit[]) await run(scoreCheckpoint, deps, { checkpointId, suiteId, split, purpose: 'gate' });
}

let incumbent: string;
let trained: { path: string; sha256: string };

beforeAll(async () => {
  ({ handle: h, url: dbUrl } = await freshDatabase('planted_cheats'));
  deps = { db: h.db, home };
  const prod = `${prefix}-production`;
  await registerCampaign(h.db, { campaignId: prod, spec: fastBuiltinSpec(prod) });
  ({ suiteId, datasetVersionId: baseVersionId } = await prepareTask(deps, { campaignId: prod }));
  const publicItems = await h.db.select().from(evalItems).where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'public')));
  fs.writeFileSync(leakFile, JSON.stringify({ public: publicItems.map((i) => ({ prompt: i.prompt, reference: i.reference })) }));

  const [version] = await h.db.select().from(datasetVersions).where(eq(datasetVersions.id, baseVersionId));
  const text = fs.readFileSync(path.join(version.path, 'train.txt'), 'utf8');
  // The production model: a short run. Every candidate below starts from the same longer run of the same recipe.
  await h.db.insert(experiments).values({ id: `${prod}/e0`, campaignId: prod, innerLoopId: `${prod}/inner`, index: 0, datasetVersionId: baseVersionId, params: {}, proposer: 'test', status: 'succeeded' });
  incumbent = (await trainCheckpoint({ dir: home, id: `${prod}/e0/r1/step-20`, text, seed: 1, steps: 20, db: h.db, experimentId: `${prod}/e0` })).id;
  trained = await trainCheckpoint({ dir: home, id: 'shared/step-300', text, seed: 2, steps: 300 });
  await scoreAll(incumbent);
}, 300_000);
afterAll(async () => h?.close());

const gate = async (recipe: string, candidateCheckpointId: string) => {
  const decisionId = `${prefix}-${recipe}/outer/i1/gate`;
  const summary = await evaluateGate(h.db, { decisionId, campaignId: `${prefix}-${recipe}`, candidateCheckpointId, incumbentCheckpointId: incumbent, suiteId });
  const [row] = await h.db.select().from(decisions).where(eq(decisions.id, decisionId));
  const checks = (row.figures as { checks: Record<string, { passed: boolean; reason: string }> }).checks;
  return { summary, row, checks };
};

test('the honest recipe with a real improvement is promoted: no false rejection', async () => {
  const cand = await candidateOf('honest', trained);
  await scoreAll(cand);
  const { summary, checks } = await gate('honest', cand);
  expect(Object.entries(checks).filter(([, c]) => !c.passed)).toEqual([]);
  expect(summary).toMatchObject({ promote: true, rule: 'allChecksPassed' });
}, 300_000);

test('a recipe that memorises the public references is rejected: public rises without held-out, and its twins fail', async () => {
  const cand = await candidateOf('memorise', trained);
  await scoreAll(cand);
  const { summary, row, checks } = await gate('memorise', cand);
  expect(summary).toMatchObject({ promote: false, rule: 'publicHeldoutGap' });
  expect(row).toMatchObject({ kind: 'reject', accepted: false });
  expect(checks.publicHeldoutGap.reason).toMatch(/public exact_match improves by (0\.[5-9]|1\.0)\d*.*public rises without held-out/);
  expect(checks.twinGap.passed).toBe(false);
  expect(checks.twinGap.reason).toContain(`${suiteId}/twin-`);
  expect(checks.heldoutImprovement.passed).toBe(true); // the same weights: held-out alone would have promoted it
}, 300_000);

test('a recipe whose outputs tamper with the test grader is rejected by the cheat-only items', async () => {
  const cand = await candidateOf('tamper', trained);
  await scoreAll(cand);
  const { summary, checks } = await gate('tamper', cand);
  expect(summary).toMatchObject({ promote: false, rule: 'cheatOnlyPass' });
  expect(checks.cheatOnlyPass.reason).toContain(`${suiteId}/cheat-only-add`);
  expect(checks.heldoutImprovement.passed).toBe(true);
}, 300_000);

describe('dataset cheats are refused before any training run', () => {
  const versionWith = async (label: string, extra: { ref: string; content: string }[]) => {
    const id = `${prefix}/code@${label}`;
    const base = await h.db.select().from(examples).where(eq(examples.datasetVersionId, baseVersionId));
    await h.db.insert(datasets).values({ id: `${prefix}/code`, campaignId: `${prefix}-production`, name: 'code' }).onConflictDoNothing();
    const rows = [...base.map((e) => ({ ...e, datasetVersionId: id, createdAt: undefined })), ...extra.map((x) => ({ datasetVersionId: id, contentHash: `${label}-${x.ref}`, source: 'cheat', sourceRef: x.ref, content: x.content }))];
    for (let i = 0; i < rows.length; i += 200) await h.db.insert(examples).values(rows.slice(i, i + 200));
    await h.db.insert(datasetVersions).values({ id, datasetId: `${prefix}/code`, path: path.join(home, label), contentHash: label, countsBySource: {} });
    return id;
  };

  test('a recipe that trains on the public eval items', async () => {
    const publicItems = await h.db.select().from(evalItems).where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'public')));
    const id = await versionWith('public-items', publicItems.slice(0, 5).map((i, k) => ({ ref: `public-${k}`, content: `${i.prompt}${i.reference}\n` })));
    const err = await checkContamination(deps, { datasetVersionId: id, reader: 'planted' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContaminatedDatasetError);
    for (const k of [0, 1, 2, 3, 4]) expect((err as Error).message).toMatch(new RegExp(`cheat:public-${k} (contains|shares)`));
  });

  test('a recipe whose dataset carries a canary', async () => {
    const [suite] = await h.db.select().from(evalSuites).where(eq(evalSuites.id, suiteId));
    const [canary] = (suite.settings as { canaries: string[] }).canaries;
    const id = await versionWith('canary', [{ ref: 'scraped-page', content: `// copied from somewhere\nconst id = "${canary}";\n` }]);
    const err = await checkContamination(deps, { datasetVersionId: id, reader: 'planted' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContaminatedDatasetError);
    expect((err as Error).message).toContain(`cheat:scraped-page carries canary ${suiteId}#canary0`);
    expect((err as Error).message).not.toContain(canary);
  });

  test('the base dataset of the built-in task is clean', async () => {
    await expect(checkContamination(deps, { datasetVersionId: baseVersionId, reader: 'planted' })).resolves.toMatchObject({ datasetVersionId: baseVersionId });
  });
});

test('no decision holds held-out text: ids and figures only', async () => {
  const held = await h.db.select({ prompt: evalItems.prompt, reference: evalItems.reference }).from(evalItems).where(and(eq(evalItems.suiteId, suiteId), eq(evalItems.split, 'heldout')));
  const recorded = JSON.stringify(await h.db.select().from(decisions));
  const leaked = held.filter((i) => (i.prompt.length >= 24 && recorded.includes(i.prompt)) || (i.reference.length >= 24 && recorded.includes(i.reference)));
  expect(held.length).toBeGreaterThan(0);
  expect(leaked).toEqual([]);
});

test('`flywheel report CAMPAIGN` shows each gate decision with its rule, its figures and the items named', async () => {
  const bin = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');
  const report = (campaign: string) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, [bin, 'report', campaign], { env: { ...process.env, DATABASE_URL: dbUrl, FLYWHEEL_HOME: home }, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code) : 0, out: stdout + stderr }),
      ),
    );
  const tamper = await report(`${prefix}-tamper`);
  expect(tamper.code).toBe(0);
  expect(tamper.out).toContain(`### ${prefix}-tamper/outer/i1/gate: REJECTED (rule: cheatOnlyPass)`);
  expect(tamper.out).toMatch(/\| cheatOnlyPass \| \*\*fail\*\* \| .*items=.*cheat-only-add/);
  expect(tamper.out).toMatch(/\| heldoutImprovement \| pass \| .*meanDelta=/);
  const memorise = await report(`${prefix}-memorise`);
  expect(memorise.out).toContain('REJECTED (rule: publicHeldoutGap)');
  expect(memorise.out).toMatch(/\| twinGap \| \*\*fail\*\* \| .*items=.*twin-/);
  expect((await report(`${prefix}-honest`)).out).toContain('promoted (rule: allChecksPassed)');
  const unknown = await report('no-such-campaign');
  expect(unknown.code).toBe(2);
  expect(unknown.out).toContain('no campaign "no-such-campaign"');
}, 120_000);
