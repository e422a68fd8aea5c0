// Held-out text that reaches a model, whatever the channel, is caught: a predict that answers held-out prompts from a
// leak completes the held-out canaries and is rejected, held-out text in a dataset version is refused before training,
// and an honest recipe beside them is promoted. (A trainer that trains on leaked held-out text is rejected by the
// reference control, against seed reruns by a trainer it did not write: test/evals/gate-noise-seeds.test.ts, where
// the gate's own plan trains them. Against the incumbent alone, that 600-step leak now sits under the 3σ bound: the
// held-out items come from 36 files, and a weak incumbent's uneven gains widen σ.) Real parts: the built-in suite with its probes and held-out canaries (prepareTask), each recipe's own `train`
// entry run as a trainer is (a child process on a run directory whose run.json names the base dataset version), its
// own `predict` run by scoreCheckpoint, the contamination check and the gate's decision rows. The leak itself is
// simulated: the held-out items' text, read from the database, is handed to the cheat in a file named in its argv
// (test/helpers/planted-cheats.ts), standing for any channel that carries held-out text to a trainer.
import { and, eq } from 'drizzle-orm';
import { checkContamination } from '../../activities/eval/check-contamination';
import { ContaminatedDatasetError } from '../../core/errors';
import type { DbHandle } from '../../db/client';
import { decisions, evalItems, evalSuites } from '../../db/schema';
import { freshDatabase, scratchDir } from '../helpers/env';
import { plantedCheats, type PlantedCheats } from '../helpers/planted-cheats';
import { uniqueName } from '../helpers/specs';

const home = scratchDir('heldout-leak');
const prefix = uniqueName('leak');
/** The honest recipe's training, as the planted-cheats helper's recipes train. */
const TRAINING = { steps: 600, seed: 2 };
let h: DbHandle;
let p: PlantedCheats;
let incumbent: string;
let honest: { path: string; sha256: string };

type Checks = Record<string, { passed: boolean; reason: string; [figure: string]: unknown }>;
const failing = (checks: Checks) =>
  Object.entries(checks)
    .filter(([, c]) => !c.passed)
    .map(([rule]) => rule)
    .sort();

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('heldout_leak'));
  p = await plantedCheats(h.db, home, prefix);
  incumbent = await p.production('0', 1);
  honest = await p.train('honest', '', TRAINING);
}, 600_000);
afterAll(async () => h?.close());

test('the honest recipe is promoted: heldoutOutrunsPublic and the held-out canaries pass it', async () => {
  const { summary, checks } = await p.gate('honest', '', await p.candidate('honest', '', honest), incumbent);
  expect(failing(checks)).toEqual([]);
  expect(summary).toMatchObject({ promote: true, hold: false, rule: 'allChecksPassed' });
  const outrun = checks.heldoutOutrunsPublic as unknown as Record<string, number>;
  expect(outrun['bits_per_byte.outrun']).toBeLessThan(outrun['bits_per_byte.bound']);
  expect(checks.heldoutCanaryInOutputs.reason).toBe('no output completes a held-out canary');
}, 300_000);

test('a predict that answers held-out prompts from a leak completes the held-out canaries and is rejected', async () => {
  const { summary, checks } = await p.gate('heldout-memorise', '', await p.candidate('heldout-memorise', '', honest), incumbent);
  expect(summary).toMatchObject({ promote: false, hold: false });
  expect(failing(checks)).toEqual(['heldoutCanaryInOutputs', 'heldoutOutrunsPublic']);
  expect(checks.heldoutCanaryInOutputs.reason).toContain(`${p.suiteId}/heldout-canary-0`);
  expect(checks.heldoutCanaryInOutputs.reason).toContain(`${p.suiteId}/heldout-canary-1`);
  expect(checks.heldoutOutrunsPublic.reason).toMatch(/held-out exact_match improves by 1\.0000, public by 0\.\d+/);
}, 300_000);

test('held-out text in a dataset version is refused before training, naming the held-out canary', async () => {
  const [suite] = await h.db.select().from(evalSuites).where(eq(evalSuites.id, p.suiteId));
  const [canary] = suite.settings.heldoutCanaries!;
  const items = await h.db
    .select()
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, p.suiteId), eq(evalItems.split, 'heldout')));
  const carrier = items.find((i) => i.id === `${p.suiteId}/heldout-canary-0`)!;
  const id = await p.versionWith('heldout-leak', [{ ref: 'exported-evals', content: `${carrier.prompt}${carrier.reference}\n` }]);
  const err = await checkContamination({ db: h.db, home }, { datasetVersionId: id, reader: 'planted' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ContaminatedDatasetError);
  expect((err as Error).message).toContain(`cheat:exported-evals carries canary ${p.suiteId}#heldout-canary0`);
  expect((err as Error).message).not.toContain(canary);
});

test('held-out canaries are in held-out items only, and no decision holds held-out text or a canary', async () => {
  const [suite] = await h.db.select().from(evalSuites).where(eq(evalSuites.id, p.suiteId));
  const canaries = suite.settings.heldoutCanaries!;
  expect(canaries).toHaveLength(2);
  const all = await h.db.select().from(evalItems).where(eq(evalItems.suiteId, p.suiteId));
  for (const c of canaries) expect(all.filter((i) => (i.prompt + i.reference).includes(c)).map((i) => i.split)).toEqual(['heldout']);
  expect(p.trainText.includes(canaries[0]) || p.trainText.includes(canaries[1])).toBe(false);
  const recorded = JSON.stringify(await h.db.select().from(decisions));
  const held = all.filter((i) => i.split === 'heldout');
  expect(
    held.filter(
      (i) => (i.prompt.length >= 24 && recorded.includes(i.prompt)) || (i.reference.length >= 24 && recorded.includes(i.reference)),
    ),
  ).toEqual([]);
  for (const c of canaries) expect(recorded.includes(c.slice(12))).toBe(false);
});
