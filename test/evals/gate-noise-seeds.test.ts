// Twenty seeded gate runs on the built-in task: an honest improvement above 2σ promoted at least 19 times, every
// planted cheat rejected every time (but `tamper`, whose outputs can no longer pass a cheat-only item). Affordable, not
// twenty trainings: the checkpoints are trained and scored once (real charlm runs, the recipes' own `predict`, the real
// scoreCheckpoint and evaluateGate), with the gate's own seed reruns giving σ_seed and the leak check's reference:
// planned by planSeedReruns for the leaking campaign (whose trainer command is the `heldout-train` cheat), so they run
// the task's reference trainer (Flywheel's builtin) under a derived campaign version, launched by runTraining as the
// experiment workflow launches them. Then each of the 20 runs is the gate's statistics on those recorded per-item
// scores, with the held-out items drawn again (a seeded bootstrap: another held-out set of the same size) and the
// gate's resampling seed changed.
import { MockActivityEnvironment } from '@temporalio/testing';
import type { DbHandle } from '../../db/client';
import { loadGateEvidence } from '../../activities/outer/evaluate-gate';
import { planSeedReruns } from '../../activities/outer/plan-seed-reruns';
import { runTraining } from '../../activities/training/run-training';
import type { SeedRerunPlan } from '../../contracts/outer-activities';
import type { TrainingOutcome } from '../../contracts/training';
import { runGate } from '../../core/gate/checks';
import type { GateEvidence } from '../../core/gate/evidence';
import { gateNoiseOf } from '../../core/gate/noise-check';
import { seededUniform } from '../../core/gate/paired-test';
import { gateSettingsWithDefaults } from '../../core/gate/settings';
import { latestCampaignVersionId, loadCampaignVersion } from '../../services/campaigns/campaign-versions';
import { gateDecisionById } from '../../services/decisions';
import { experimentRef } from '../../services/experiments';
import { experimentsByIds } from '../../services/inner-loops';
import { trainCheckpoint } from '../helpers/charlm-checkpoint';
import { freshDatabase, scratchDir } from '../helpers/env';
import { CHEAT_TRAIN_PARAMS, plantedCheats, type OutputRecipe, type PlantedCheats } from '../helpers/planted-cheats';
import { uniqueName } from '../helpers/specs';

const home = scratchDir('gate-noise-seeds');
const prefix = uniqueName('gns');
const RUNS = 20;
/**
 * The recipe the incumbent's experiment row records, which the gate's reruns retrain: the candidates' 300 steps. Its
 * checkpoint is a 20-step run (so an honest candidate has something to beat), as the hand-made reruns were before.
 */
const RECIPE = { ...CHEAT_TRAIN_PARAMS, steps: 300 };
let h: DbHandle;
let p: PlantedCheats;
let incumbent: string;
let plan: SeedRerunPlan;
let leakVersionId: string;
const reruns: string[] = [];
/** The checkpoint the `heldout-train` cheat wrote: trained on the base data and the leaked held-out items' text. */
let leak: { path: string; sha256: string };
/** An honest 300-step checkpoint, which the output cheats (memorise, tamper, heldout-memorise) submit as theirs. */
let trained: { path: string; sha256: string };
const evidence = new Map<OutputRecipe, GateEvidence>();
const recorded = new Map<OutputRecipe, { promote: boolean; rule: string }>();

beforeAll(async () => {
  ({ handle: h } = await freshDatabase('gate_noise_seeds'));
  p = await plantedCheats(h.db, home, prefix);
  incumbent = await p.production('0', 1, RECIPE);
  trained = await trainCheckpoint({ dir: home, id: 'shared/step-300', text: p.trainText, seed: 2, steps: 300 });
  leak = await p.train('heldout-train', '', { steps: 600, seed: 2 });
  const files: [OutputRecipe, { path: string; sha256: string }][] = [
    ['honest', trained],
    ['memorise', trained],
    ['tamper', trained],
    ['heldout-memorise', trained],
    ['heldout-train', leak],
  ];
  const candidates = new Map<OutputRecipe, string>();
  for (const [recipe, file] of files) candidates.set(recipe, await p.candidate(recipe, '', file));

  // σ_seed and the leak reference: the gate's own plan for the leaking campaign, and each rerun it asks for trained
  // (the real launch: the experiment's pinned version names the trainer) and scored like any checkpoint. Every
  // campaign here has the same dataset version, recipe and spec seed, so its plan's reruns are these same trainings.
  const deps = { db: h.db, home };
  leakVersionId = (await experimentRef(h.db, `${prefix}-heldout-train/e1`))!.campaignVersionId!;
  plan = await planSeedReruns(deps, {
    campaignId: `${prefix}-heldout-train`,
    campaignVersionId: leakVersionId,
    datasetVersionId: p.baseVersionId,
    incumbentCheckpointId: incumbent,
    candidateCheckpointId: candidates.get('heldout-train')!,
    seeds: 3,
  });
  for (const experimentId of plan.toRun) {
    const pruning = { rule: 'none', warmupSteps: 0, minCompleted: 0, metric: 'bits_per_byte' };
    const outcome: TrainingOutcome = await new MockActivityEnvironment({ heartbeatTimeoutMs: 60_000 }).run(runTraining, deps, {
      experimentId,
      attempt: 1,
      innerLoopId: plan.groupId,
      pruning,
      timeoutSeconds: 600,
    });
    if (outcome.status !== 'succeeded' || !outcome.checkpointId)
      throw new Error(`rerun ${experimentId}: ${outcome.status} ${outcome.error ?? ''}`);
    await p.score(outcome.checkpointId);
    reruns.push(outcome.checkpointId);
  }

  for (const [recipe] of files) {
    const candidate = candidates.get(recipe)!;
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
    // Items alone, as p.gate pairs them (test/helpers/planted-cheats.ts): the redraws below resample items, which
    // clusters of the 13 files the fast suite's 20 held-out loss items come from would not keep apart.
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

test("the reruns are the gate's own plan, trained by the task's reference trainer, not the leaking campaign's command", async () => {
  expect(plan.toRun).toHaveLength(3);
  expect(reruns).toHaveLength(3);
  expect(plan.reference).toBe(
    "independent: the reruns ran the task's reference trainer (builtin), Flywheel's own, which no candidate writes",
  );
  // Their experiments pin a derived version: the leaking campaign's spec with Flywheel's trainer in place of the cheat.
  const rows = await experimentsByIds(h.db, plan.toRun);
  const versionId = rows[0].campaignVersionId!;
  expect(new Set(rows.map((r) => r.campaignVersionId))).toEqual(new Set([versionId]));
  expect(versionId).toMatch(new RegExp(`^${prefix}-heldout-train@ref-[0-9a-f]{12}$`));
  expect((await loadCampaignVersion(h.db, leakVersionId)).spec.trainer.command).toEqual(p.trainer('heldout-train').command);
  expect((await loadCampaignVersion(h.db, versionId)).spec.trainer).toMatchObject({ command: 'builtin', readOnlyPaths: [] });
  expect(rows.map((r) => r.params)).toEqual([RECIPE, RECIPE, RECIPE]);
  // Never the campaign's latest version: a person's registration stays what an unpinned loop runs.
  expect(await latestCampaignVersionId(h.db, `${prefix}-heldout-train`)).toBe(leakVersionId);
  // The decision records whose trainer the reference ran, and its reason line says so.
  const decision = (await gateDecisionById(h.db, `${prefix}-heldout-train/outer/i1/gate`))!;
  expect(decision.figures.referenceTrainer).toEqual({ source: 'task', versionId });
  expect(decision.figures.referenceControl).toBe(plan.reference);
  expect(decision.reason).toContain(`reference control ${plan.reference}`);
});

test('the held-out leak in training (heldout-train) is rejected in all 20 runs, by the reference control alone each time', () => {
  // Only heldoutOutrunsPublic can see a leak through training (no canary is written, no probe is passed). Against the
  // 20-step incumbent alone, a 3σ test whose σ the uneven gains over a weak model widen, this leak sits near the bound
  // (18 of 20 redraws before the reference control). Against the seed reruns' mean, a model trained on the same data
  // by a trainer that is not the cheat's (so it never saw held-out text), it stands clear in every redraw. Reruns by
  // the campaign's own command, as before the reference trainer, would have trained on the leak too.
  expect(recorded.get('heldout-train')).toMatchObject({ promote: false, rule: 'heldoutOutrunsPublic' });
  expect(verdicts('heldout-train')).toEqual(Array.from({ length: RUNS }, () => 'heldoutOutrunsPublic'));
  const againstReference = Array.from({ length: RUNS }, (_, k) => {
    const f = runGate(redrawn(evidence.get('heldout-train')!, k + 1)).results.find((r) => r.rule === 'heldoutOutrunsPublic')!.figures;
    return (f['bits_per_byte.reference.outrun'] as number) > (f['bits_per_byte.reference.bound'] as number);
  });
  expect(againstReference).toEqual(Array.from({ length: RUNS }, () => true));
});

test('the recorded heldout-train decision: rejected by heldoutOutrunsPublic, the one check that fails it', async () => {
  // Every other check passes it: its held-out improvement is real and significant, its public gain ordinary.
  const decision = (await gateDecisionById(h.db, `${prefix}-heldout-train/outer/i1/gate`))!;
  expect(decision).toMatchObject({ kind: 'reject', accepted: false, rule: 'heldoutOutrunsPublic' });
  const checks = decision.figures.checks!;
  expect(Object.keys(checks).filter((rule) => !checks[rule].passed)).toEqual(['heldoutOutrunsPublic']);
  const f = checks.heldoutOutrunsPublic as unknown as Record<string, number | string>;
  expect(f).toMatchObject({ k: 3, action: 'reject' });
  expect(f['bits_per_byte.reference.outrun'] as number).toBeGreaterThan(f['bits_per_byte.reference.bound'] as number);
  expect(f['bits_per_byte.reference.bound']).toBeCloseTo(3 * (f['bits_per_byte.reference.sigma'] as number), 5);
  expect(checks.heldoutOutrunsPublic.reason).toMatch(
    /held-out bits_per_byte improves over the mean of 3 seed rerun\(s\) by \d\.\d+, public by -?\d\.\d+: held-out outruns public by \d\.\d+ \(bound 3σ = \d\.\d+, σ = \d\.\d+ from \d+ held-out and \d+ public paired deltas\)/,
  );
});

test('heldoutOutrun: hold keeps the statistical case for a researcher (a hold decision); a held-out canary still rejects', async () => {
  const held = await p.gate(
    'heldout-train',
    '-hold',
    await p.candidate('heldout-train', '-hold', leak),
    incumbent,
    { heldoutOutrun: 'hold' },
    reruns,
  );
  expect(held.summary).toMatchObject({ promote: false, hold: true, rule: 'heldoutOutrunsPublic' });
  expect(held.summary.reason).toMatch(/^held by heldoutOutrunsPublic: .*held for a researcher's approval \(heldoutOutrun: hold\)$/);
  expect(await gateDecisionById(h.db, `${prefix}-heldout-train-hold/outer/i1/gate`)).toMatchObject({ kind: 'hold', accepted: false });
  const memorised = await p.gate(
    'heldout-memorise',
    '-hold',
    await p.candidate('heldout-memorise', '-hold', trained),
    incumbent,
    { heldoutOutrun: 'hold' },
    reruns,
  );
  expect(memorised.summary).toMatchObject({ promote: false, hold: false });
}, 300_000);

test('the honest candidate is not taken for a leak against either control, in any of the 20 runs', () => {
  const outruns = Array.from({ length: RUNS }, (_, k) =>
    runGate(redrawn(evidence.get('honest')!, k + 1)).results.find((r) => r.rule === 'heldoutOutrunsPublic')!,
  );
  expect(outruns.filter((r) => !r.passed)).toEqual([]);
  // The reference control was measured (the reruns were scored on both splits), not skipped.
  expect(outruns[0].figures['bits_per_byte.reference.heldoutN']).toBeGreaterThan(0);
});
