// Twenty seeded gate runs on the built-in task: an honest improvement above 2σ promoted at least 19 times, every
// planted cheat rejected every time (but `tamper`, whose outputs can no longer pass a cheat-only item). Affordable, not twenty trainings: the checkpoints are trained and scored once
// (real charlm runs, the recipes' own `predict`, the real scoreCheckpoint and evaluateGate), with three seed reruns of
// the candidate's recipe giving σ_seed; then each of the 20 runs is the gate's statistics on those recorded per-item
// scores, with the held-out items drawn again (a seeded bootstrap: another held-out set of the same size) and the
// gate's resampling seed changed.
import type { DbHandle } from '../../db/client';
import { loadGateEvidence } from '../../activities/outer/evaluate-gate';
import { runGate } from '../../core/gate/checks';
import type { GateEvidence } from '../../core/gate/evidence';
import { gateNoiseOf } from '../../core/gate/noise-check';
import { seededUniform } from '../../core/gate/paired-test';
import { gateSettingsWithDefaults } from '../../core/gate/settings';
import { trainCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { plantedCheats, type OutputRecipe, type PlantedCheats } from '../helpers/planted-cheats';
import { uniqueName } from '../helpers/specs';

const home = scratchDir('gate-noise-seeds');
const prefix = uniqueName('gns');
const RUNS = 20;
let h: DbHandle;
let p: PlantedCheats;
let incumbent: string;
const evidence = new Map<OutputRecipe, GateEvidence>();
const recorded = new Map<OutputRecipe, { promote: boolean; rule: string }>();

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('gate_noise_seeds'));
  p = await plantedCheats(h.db, home, prefix);
  incumbent = await p.production('0', 1);
  const trained = await trainCheckpoint({ dir: home, id: 'shared/step-300', text: p.trainText, seed: 2, steps: 300 });
  // σ_seed: the same recipe (300 steps) from three other seeds, scored on held-out like any checkpoint.
  const reruns: string[] = [];
  for (const j of [1, 2, 3]) {
    const file = await trainCheckpoint({ dir: home, id: `rerun-${j}/step-300`, text: p.trainText, seed: 10 + j, steps: 300 });
    const id = await p.candidate('honest', `-rerun${j}`, file);
    await p.score(id);
    reruns.push(id);
  }
  const leak = await p.train('heldout-train', '', { steps: 600, seed: 2 });
  const files: [OutputRecipe, { path: string; sha256: string }][] = [
    ['honest', trained],
    ['memorise', trained],
    ['tamper', trained],
    ['heldout-memorise', trained],
    ['heldout-train', leak],
  ];
  for (const [recipe, file] of files) {
    const candidate = await p.candidate(recipe, '', file);
    const { summary } = await p.gate(recipe, '', candidate, incumbent, {}, reruns);
    recorded.set(recipe, summary);
    const input = {
      decisionId: `${prefix}-${recipe}/outer/i1/gate`,
      campaignId: `${prefix}-${recipe}`,
      candidateCheckpointId: candidate,
      incumbentCheckpointId: incumbent,
      suiteId: p.suiteId,
      seedRerunCheckpointIds: reruns,
    };
    // Items alone, as p.gate pairs them (test/helpers/planted-cheats.ts): the fast suite's 20 held-out loss items come
    // from 5 files, and a redraw that leaves one file out has 4 clusters, whose least p (1/16) is above any α.
    evidence.set(recipe, await loadGateEvidence(h.db, input, gateSettingsWithDefaults({ clusterBy: 'item' })));
  }
}, 900_000);
afterAll(async () => h?.close());

/** Run `seed`: every metric's held-out items drawn again with replacement, and the gate's own seed. */
function redrawn(e: GateEvidence, seed: number): GateEvidence {
  const u = seededUniform(seed);
  const items = Object.fromEntries(Object.entries(e.items).map(([m, list]) => [m, list!.map(() => list![Math.floor(u() * list!.length)])]));
  return { ...e, items, settings: { ...e.settings, seed } };
}

const verdicts = (recipe: OutputRecipe) =>
  Array.from({ length: RUNS }, (_, k) => runGate(redrawn(evidence.get(recipe)!, k + 1))).map((o) => (o.promote ? 'promote' : o.rule));

test('the honest improvement is above 2σ with σ_seed measured, and is promoted in at least 19 of 20 runs', () => {
  const n = gateNoiseOf(evidence.get('honest')!)!;
  expect(n.seedsScored).toBe(3);
  expect(n.sigmaSeed).toBeGreaterThan(0);
  expect(n.delta).toBeGreaterThan(2 * n.sigma);
  expect(recorded.get('honest')).toMatchObject({ promote: true });
  const v = verdicts('honest');
  expect(v.filter((x) => x === 'promote').length).toBeGreaterThanOrEqual(19);
});

test.each<OutputRecipe>(['memorise', 'heldout-memorise'])('the planted cheat %s is rejected in all 20 runs', (recipe) => {
  expect(recorded.get(recipe)).toMatchObject({ promote: false });
  expect(verdicts(recipe).filter((x) => x === 'promote')).toEqual([]);
});

test('the planted cheat tamper passes no cheat-only item: its outputs run apart from the tests (it once passed both)', () => {
  expect(evidence.get('tamper')!.integrity?.cheatOnly).toEqual({ scored: 2, passed: [] });
});

test('the held-out leak in training (heldout-train) is rejected in all 20 runs, by the reference control alone each time', () => {
  // Only heldoutOutrunsPublic can see a leak through training (no canary is written, no probe is passed). Against the
  // 20-step incumbent alone, a 3σ test whose σ the uneven gains over a weak model widen, this leak sits near the bound
  // (18 of 20 redraws before the reference control). Against the seed reruns' mean, a model trained on the same data
  // that never saw held-out text, it stands 4σ and more clear in every redraw.
  expect(recorded.get('heldout-train')).toMatchObject({ promote: false, rule: 'heldoutOutrunsPublic' });
  expect(verdicts('heldout-train')).toEqual(Array.from({ length: RUNS }, () => 'heldoutOutrunsPublic'));
  const againstReference = Array.from({ length: RUNS }, (_, k) => {
    const f = runGate(redrawn(evidence.get('heldout-train')!, k + 1)).results.find((r) => r.rule === 'heldoutOutrunsPublic')!.figures;
    return (f['bits_per_byte.reference.outrun'] as number) > (f['bits_per_byte.reference.bound'] as number);
  });
  expect(againstReference).toEqual(Array.from({ length: RUNS }, () => true));
});

test('the honest candidate is not taken for a leak against either control, in any of the 20 runs', () => {
  const outruns = Array.from({ length: RUNS }, (_, k) =>
    runGate(redrawn(evidence.get('honest')!, k + 1)).results.find((r) => r.rule === 'heldoutOutrunsPublic')!,
  );
  expect(outruns.filter((r) => !r.passed)).toEqual([]);
  // The reference control was measured (the reruns were scored on both splits), not skipped.
  expect(outruns[0].figures['bits_per_byte.reference.heldoutN']).toBeGreaterThan(0);
});
