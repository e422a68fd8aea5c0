// Planted cheats for the built-in task, each caught, and an honest recipe promoted in the same run. Real parts: the
// built-in suite with its probes (prepareTask), real charlm checkpoints, the recipes' own `predict` programs run by
// scoreCheckpoint, the contamination check and the gate's decision rows. Dataset cheats (training on public items,
// a canary in the data) are refused before training; memorised references are rejected by the gate, by their rule;
// outputs that tamper with the test grader gain nothing (their cheat-only items fail: the grader runs them apart from
// the tests).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { checkContamination } from '../../activities/eval/check-contamination';
import { ContaminatedDatasetError } from '../../core/errors';
import type { DbHandle } from '../../db/client';
import { decisions, evalItems, evalSuites } from '../../db/schema';
import { trainCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { plantedCheats, type PlantedCheats } from '../helpers/planted-cheats';
import { uniqueName } from '../helpers/specs';

const home = scratchDir('planted-cheats');
const prefix = uniqueName('cheat');
let h: DbHandle;
let dbUrl: string;
let p: PlantedCheats;
let incumbent: string;
let trained: { path: string; sha256: string };

beforeAll(async () => {
  ({ handle: h, url: dbUrl } = await freshDatabase('planted_cheats'));
  p = await plantedCheats(h.db, home, prefix);
  incumbent = await p.production('0', 1);
  // Every output recipe holds the same longer honest run: only its `predict` differs.
  trained = await trainCheckpoint({ dir: home, id: 'shared/step-300', text: p.trainText, seed: 2, steps: 300 });
}, 300_000);
afterAll(async () => h?.close());

const gate = async (recipe: 'honest' | 'memorise' | 'tamper') => p.gate(recipe, '', await p.candidate(recipe, '', trained), incumbent);

test('the honest recipe with a real improvement is promoted: no false rejection', async () => {
  const { summary, checks } = await gate('honest');
  expect(Object.entries(checks).filter(([, c]) => !c.passed)).toEqual([]);
  expect(summary).toMatchObject({ promote: true, rule: 'allChecksPassed' });
}, 300_000);

test('a recipe that memorises the public references is rejected: public rises without held-out, and its twins fail', async () => {
  const { summary, checks } = await gate('memorise');
  expect(summary).toMatchObject({ promote: false, rule: 'publicHeldoutGap' });
  const [row] = await h.db
    .select()
    .from(decisions)
    .where(eq(decisions.id, `${prefix}-memorise/outer/i1/gate`));
  expect(row).toMatchObject({ kind: 'reject', accepted: false });
  expect(checks.publicHeldoutGap.reason).toMatch(/public exact_match improves by (0\.[5-9]|1\.0)\d*.*public rises without held-out/);
  expect(checks.twinGap.passed).toBe(false);
  expect(checks.twinGap.reason).toContain(`${p.suiteId}/twin-`);
  expect(checks.heldoutImprovement.passed).toBe(true); // the same weights: held-out alone would have promoted it
}, 300_000);

test('a recipe whose outputs tamper with the test grader passes no cheat-only item: the tampering stays in its own process', async () => {
  const { checks } = await gate('tamper');
  // On the one-program grader both passed, and this check rejected the candidate.
  expect(checks.cheatOnlyPass).toMatchObject({ passed: true, reason: 'no cheat-only item passed (2 scored)' });
}, 300_000);

describe('dataset cheats are refused before any training run', () => {
  test('a recipe that trains on the public eval items', async () => {
    const publicItems = await p.publicItems();
    const id = await p.versionWith(
      'public-items',
      publicItems.slice(0, 5).map((i, k) => ({ ref: `public-${k}`, content: `${i.prompt}${i.reference}\n` })),
    );
    const err = await checkContamination({ db: h.db, home }, { datasetVersionId: id, reader: 'planted' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContaminatedDatasetError);
    for (const k of [0, 1, 2, 3, 4]) expect((err as Error).message).toMatch(new RegExp(`cheat:public-${k} (contains|shares)`));
  });

  test('a recipe whose dataset carries a canary', async () => {
    const [suite] = await h.db.select().from(evalSuites).where(eq(evalSuites.id, p.suiteId));
    const [canary] = suite.settings.canaries!;
    const id = await p.versionWith('canary', [{ ref: 'scraped-page', content: `// copied from somewhere\nconst id = "${canary}";\n` }]);
    const err = await checkContamination({ db: h.db, home }, { datasetVersionId: id, reader: 'planted' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContaminatedDatasetError);
    expect((err as Error).message).toContain(`cheat:scraped-page carries canary ${p.suiteId}#canary0`);
    expect((err as Error).message).not.toContain(canary);
  });

  test('the base dataset of the built-in task is clean', async () => {
    await expect(checkContamination({ db: h.db, home }, { datasetVersionId: p.baseVersionId, reader: 'planted' })).resolves.toMatchObject({
      datasetVersionId: p.baseVersionId,
    });
  });
});

test('no decision holds held-out text: ids and figures only', async () => {
  const held = (
    await h.db
      .select({ prompt: evalItems.prompt, reference: evalItems.reference, split: evalItems.split })
      .from(evalItems)
      .where(eq(evalItems.suiteId, p.suiteId))
  ).filter((i) => i.split === 'heldout');
  const recorded = JSON.stringify(await h.db.select().from(decisions));
  const leaked = held.filter(
    (i) => (i.prompt.length >= 24 && recorded.includes(i.prompt)) || (i.reference.length >= 24 && recorded.includes(i.reference)),
  );
  expect(held.length).toBeGreaterThan(0);
  expect(leaked).toEqual([]);
});

test('`flywheel report CAMPAIGN` shows each gate decision with its rule, its figures and the items named', async () => {
  const bin = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');
  const report = (campaign: string) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile(
        process.execPath,
        [bin, 'report', campaign, '--stdout'],
        { env: { ...process.env, DATABASE_URL: dbUrl, FLYWHEEL_HOME: home }, timeout: 60_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, out: stdout + stderr }),
      ),
    );
  const tamper = await report(`${prefix}-tamper`);
  expect(tamper.code).toBe(0);
  expect(tamper.out).toContain(`### ${prefix}-tamper/outer/i1/gate: `);
  expect(tamper.out).toMatch(/\| cheatOnlyPass \| pass \| .*scored=2/);
  expect(tamper.out).toMatch(/\| heldoutImprovement \| pass \| .*meanDelta=/);
  const memorise = await report(`${prefix}-memorise`);
  expect(memorise.out).toContain('REJECTED (rule: publicHeldoutGap)');
  expect(memorise.out).toMatch(/\| twinGap \| \*\*fail\*\* \| .*items=.*twin-/);
  expect(memorise.out).toMatch(/^- verdict: rejected by publicHeldoutGap$/m);
  const honest = (await report(`${prefix}-honest`)).out;
  expect(honest).toContain('promoted (rule: allChecksPassed)');
  // A promotion's reason as a verdict, then each check a bullet of its own (not one line of every check).
  expect(honest).toMatch(/^- verdict: promoted \S+ over \S+ \(\d+ checks passed\)$/m);
  expect(honest).toMatch(/^ {2}- heldoutImprovement: /m);
  expect(honest).toMatch(/^ {2}- canaryInOutputs: /m);
  const unknown = await report('no-such-campaign');
  expect(unknown.code).toBe(2);
  expect(unknown.out).toContain('unknown campaign "no-such-campaign"');
}, 120_000);
