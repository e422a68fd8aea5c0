// Trainers that get held-out text, whatever the channel, are rejected by the gate; an honest recipe beside them is
// not. Real parts: the built-in suite with its probes and held-out canaries (prepareTask), each recipe's own `train`
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
/** Both recipes train the same model for as long, from the same seed: only the leaked text differs. */
const TRAINING = { steps: 600, seed: 2 };
let h: DbHandle;
let p: PlantedCheats;
let incumbent: string;
let honest: { path: string; sha256: string };
let leaked: { path: string; sha256: string };

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
  leaked = await p.train('heldout-train', '', TRAINING);
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

test('a trainer that trains on leaked held-out text is rejected by heldoutOutrunsPublic, the one check that fails', async () => {
  const { summary, checks } = await p.gate('heldout-train', '', await p.candidate('heldout-train', '', leaked), incumbent);
  expect(summary).toMatchObject({ promote: false, hold: false, rule: 'heldoutOutrunsPublic' });
  // Every other check passes it: its held-out improvement is real and significant, its public gain ordinary.
  expect(failing(checks)).toEqual(['heldoutOutrunsPublic']);
  const f = checks.heldoutOutrunsPublic as unknown as Record<string, number | string>;
  expect(f).toMatchObject({ k: 3, action: 'reject', 'bits_per_byte.heldoutN': 20 });
  expect(f['bits_per_byte.outrun'] as number).toBeGreaterThan(f['bits_per_byte.bound'] as number);
  expect(f['bits_per_byte.bound']).toBeCloseTo(3 * (f['bits_per_byte.sigma'] as number), 5);
  expect(checks.heldoutOutrunsPublic.reason).toMatch(
    /held-out bits_per_byte improves by 1\.\d+, public by \d\.\d+: held-out outruns public by 0\.\d+ \(bound 3σ = 0\.\d+, σ = 0\.\d+ from 20 held-out and \d+ public paired deltas\): held-out gains what public does not/,
  );
  const [row] = await h.db
    .select()
    .from(decisions)
    .where(eq(decisions.id, `${prefix}-heldout-train/outer/i1/gate`));
  expect(row).toMatchObject({ kind: 'reject', accepted: false, rule: 'heldoutOutrunsPublic' });
}, 300_000);

test('a predict that answers held-out prompts from a leak completes the held-out canaries and is rejected', async () => {
  const { summary, checks } = await p.gate('heldout-memorise', '', await p.candidate('heldout-memorise', '', honest), incumbent);
  expect(summary).toMatchObject({ promote: false, hold: false });
  expect(failing(checks)).toEqual(['heldoutCanaryInOutputs', 'heldoutOutrunsPublic']);
  expect(checks.heldoutCanaryInOutputs.reason).toContain(`${p.suiteId}/heldout-canary-0`);
  expect(checks.heldoutCanaryInOutputs.reason).toContain(`${p.suiteId}/heldout-canary-1`);
  expect(checks.heldoutOutrunsPublic.reason).toMatch(/held-out exact_match improves by 1\.0000, public by 0\.\d+/);
}, 300_000);

test('heldoutOutrun: hold keeps the statistical case for a researcher (a hold decision); a held-out canary still rejects', async () => {
  const held = await p.gate('heldout-train', '-hold', await p.candidate('heldout-train', '-hold', leaked), incumbent, {
    heldoutOutrun: 'hold',
  });
  expect(held.summary).toMatchObject({ promote: false, hold: true, rule: 'heldoutOutrunsPublic' });
  expect(held.summary.reason).toMatch(/^held by heldoutOutrunsPublic: .*held for a researcher's approval \(heldoutOutrun: hold\)$/);
  const [row] = await h.db
    .select()
    .from(decisions)
    .where(eq(decisions.id, `${prefix}-heldout-train-hold/outer/i1/gate`));
  expect(row).toMatchObject({ kind: 'hold', accepted: false });
  const proof = await p.gate('heldout-memorise', '-hold', await p.candidate('heldout-memorise', '-hold', honest), incumbent, {
    heldoutOutrun: 'hold',
  });
  expect(proof.summary).toMatchObject({ promote: false, hold: false });
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
