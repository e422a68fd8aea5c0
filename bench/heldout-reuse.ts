// The adaptive analyst against the gate (issue 33 item 7): a campaign submits candidate after candidate, each a noise
// perturbation of the incumbent with no true improvement, and keeps whatever is promoted, as a researcher iterating
// on one suite version would. Run in-process with the real gate (core/gate: runGate, its checks, the held-out budget
// and α-spending's grant through core/gate/heldout-budget.ts, the ledger kept here as evaluateGate's services keep
// it), today's gate (fixed α per gate, held-out read directly) beside the new one, on the same draws.
//
// The per-item model: an item's score (bits per byte, lower is better) is its difficulty plus the model's effect on
// it. A candidate changes its incumbent's effect on every item by τ·z, z ~ N(0, 1) independently per item, so its
// mean effect over the item population is unchanged: every promotion is a false one. The inner loop tries k such
// candidates and submits the best on public (so the public gain is selected upward, as a real candidate's is). Each
// split (public, held-out, sealed test) is its own draw of items; the test split is scored only here, for the figures.
//
// Prints, per gate: the false-promotion rate per gate and per campaign (any false promotion over the sequence), and
// the drift between the gate's held-out claim for each promoted model and its sealed test gain (mean, max, noise bar).
// Deterministic from its seed; nothing is asserted. One line naming the cause and exit 1 on error.
// Run: node bin/run-ts.js bench/heldout-reuse.ts [SEEDS] [GATES] [SEED]   (defaults 20, 60, 1)
import { DEFAULT_CHECKS, runGate } from '../core/gate/checks';
import type { GateEvidence, PairedItem } from '../core/gate/evidence';
import { budgetSpentOutcome, discoveryOf, grantOf, type HeldoutLedger } from '../core/gate/heldout-budget';
import { mean, sampleVariance, seededUniform } from '../core/gate/paired-test';
import { gateSettingsWithDefaults, type GateSettings } from '../core/gate/settings';
import { loadAverage } from './lib/load-average';

/** Items per split, per-item effect change τ of a candidate, candidates the inner loop tries per gate. */
const N = { public: 100, heldout: 100, test: 100 };
const TAU = 0.15;
const TRIES = 4;
const CATEGORIES = 3;
/** The paired test's resamples, both gates (the default 2000 quadruples the run time; p down to 0.002 still resolves α = 0.05, and the new gate refines below). */
const RESAMPLES = 500;

type Split = keyof typeof N;
interface Model {
  id: string;
  /** The model's effect per item, per split (added to the item's difficulty). */
  effect: Record<Split, Float64Array>;
}

function normals(rand: () => number) {
  return () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

/** Mean oriented gain (lower is better: incumbent − candidate) of `cand` over `inc` on a split. */
function gainOn(split: Split, cand: Model, inc: Model): number {
  let s = 0;
  for (let i = 0; i < N[split]; i++) s += inc.effect[split][i] - cand.effect[split][i];
  return s / N[split];
}

interface ArmResult {
  gates: number;
  promotions: number;
  /** Per promoted model: the gain the gate claimed on held-out, and its gain on the sealed test split (and that gain's SE). */
  claims: { claim: number; test: number; testSe: number }[];
  /** The final production's gain over the starting model, on held-out and on test. */
  finalHeldout: number;
  finalTest: number;
  spent: number;
  refused: number;
}

/**
 * One campaign of `gates` gates under one gate; `budgeted`: the new gate (Thresholdout and LORD++ through the ledger).
 * `trueGain`: each candidate is truly better by this much on every item (0: the null the bench is about).
 */
function campaign(seed: number, gates: number, budgeted: boolean, trueGain = 0): ArmResult {
  const rand = seededUniform(seed);
  const z = normals(rand);
  const difficulty = { public: [] as number[], heldout: [] as number[], test: [] as number[] };
  for (const split of ['public', 'heldout', 'test'] as Split[]) for (let i = 0; i < N[split]; i++) difficulty[split].push(2.5 + 0.3 * z());
  const start: Model = {
    id: 'm0',
    effect: { public: new Float64Array(N.public), heldout: new Float64Array(N.heldout), test: new Float64Array(N.test) },
  };
  const settings: GateSettings = budgeted
    ? gateSettingsWithDefaults({ resamples: RESAMPLES })
    : gateSettingsWithDefaults({ resamples: RESAMPLES, heldoutBudget: { enabled: false }, alphaSpending: { enabled: false } });
  const ledger: HeldoutLedger = { spent: 0, history: [] };
  const suiteId = `bench-suite-${seed}@1`;
  const out: ArmResult = { gates: 0, promotions: 0, claims: [], finalHeldout: 0, finalTest: 0, spent: 0, refused: 0 };
  let incumbent = start;
  for (let g = 0; g < gates; g++) {
    // The inner loop: TRIES perturbations of production, the best on public submitted.
    let candidate: Model | undefined;
    let bestPublic = -Infinity;
    for (let k = 0; k < TRIES; k++) {
      const c: Model = {
        id: `m${g}.${k}`,
        effect: { public: new Float64Array(N.public), heldout: new Float64Array(N.heldout), test: new Float64Array(N.test) },
      };
      for (const split of ['public', 'heldout', 'test'] as Split[])
        for (let i = 0; i < N[split]; i++) c.effect[split][i] = incumbent.effect[split][i] + TAU * z() - trueGain;
      const gain = gainOn('public', c, incumbent);
      if (gain > bestPublic) [candidate, bestPublic] = [c, gain];
    }
    const cand = candidate!;
    const score = (m: Model, split: Split, i: number) => difficulty[split][i] + m.effect[split][i];
    const items: PairedItem[] = Array.from({ length: N.heldout }, (_, i) => ({
      category: `c${i % CATEGORIES}`,
      candidate: score(cand, 'heldout', i),
      incumbent: score(incumbent, 'heldout', i),
    }));
    const publicDeltas = Array.from({ length: N.public }, (_, i) => score(incumbent, 'public', i) - score(cand, 'public', i));
    const evidence: GateEvidence = {
      candidateCheckpointId: cand.id,
      incumbentCheckpointId: incumbent.id,
      items: { bits_per_byte: items },
      settings,
      integrity: {
        means: [
          {
            metric: 'bits_per_byte',
            candidatePublic: mean(Array.from({ length: N.public }, (_, i) => score(cand, 'public', i))),
            incumbentPublic: mean(Array.from({ length: N.public }, (_, i) => score(incumbent, 'public', i))),
            candidateHeldout: mean(items.map((i) => i.candidate)),
            incumbentHeldout: mean(items.map((i) => i.incumbent)),
            publicSpread: { n: N.public, variance: sampleVariance(publicDeltas) },
          },
        ],
      },
    };
    out.gates++;
    let promote: boolean;
    let claim = gainOn('heldout', cand, incumbent);
    if (budgeted) {
      const refused = budgetSpentOutcome(suiteId, ledger, settings);
      if (refused) {
        out.refused++;
        continue;
      }
      evidence.heldoutBudget = grantOf(evidence, ledger, { suiteId, decisionId: `${suiteId}/gate/${g}` });
      const outcome = runGate(evidence, DEFAULT_CHECKS);
      ledger.history.push(discoveryOf(outcome));
      ledger.spent += evidence.heldoutBudget.answer?.spent ?? 0;
      promote = outcome.promote;
      claim = evidence.heldoutBudget.answer?.answer ?? claim;
    } else promote = runGate(evidence, DEFAULT_CHECKS).promote;
    if (!promote) continue;
    const testDeltas = Array.from({ length: N.test }, (_, i) => incumbent.effect.test[i] - cand.effect.test[i]);
    out.promotions++;
    out.claims.push({ claim, test: mean(testDeltas), testSe: Math.sqrt(sampleVariance(testDeltas) / N.test) });
    incumbent = cand;
  }
  out.finalHeldout = gainOn('heldout', incumbent, start);
  out.finalTest = gainOn('test', incumbent, start);
  out.spent = ledger.spent;
  return out;
}

const f4 = (x: number) => (x >= 0 ? ' ' : '') + x.toFixed(4);
const bar = (p: number, n: number) => 2 * Math.sqrt(Math.max(p * (1 - p), 1e-12) / Math.max(n, 1));

function report(name: string, runs: ArmResult[]): string[] {
  const gates = runs.reduce((s, r) => s + r.gates, 0);
  const promotions = runs.reduce((s, r) => s + r.promotions, 0);
  const anyFalse = runs.filter((r) => r.promotions > 0).length / runs.length;
  const perGate = promotions / gates;
  const claims = runs.flatMap((r) => r.claims);
  const drift = claims.map((c) => c.claim - c.test);
  const driftLine =
    drift.length === 0
      ? 'no promotion: nothing claimed'
      : `mean ${f4(mean(drift))} ± ${(2 * Math.sqrt(sampleVariance(drift) / drift.length)).toFixed(4)}, max ${f4(Math.max(...drift))} (test gain's own noise: SE ${mean(claims.map((c) => c.testSe)).toFixed(4)}) over ${drift.length} promoted`;
  return [
    `${name}:`,
    `  false promotions per gate      ${perGate.toFixed(4)} ± ${bar(perGate, gates).toFixed(4)}  (${promotions} of ${gates} gates)`,
    `  campaigns with any             ${anyFalse.toFixed(3)} ± ${bar(anyFalse, runs.length).toFixed(3)}  (${runs.filter((r) => r.promotions > 0).length} of ${runs.length} campaigns)`,
    `  claim − test gain, per promoted ${driftLine}`,
    `  final production vs start      held-out gain ${f4(mean(runs.map((r) => r.finalHeldout)))}, test gain ${f4(mean(runs.map((r) => r.finalTest)))} (means over campaigns)`,
  ];
}

function main(): void {
  const [seeds, gates, seed0] = [20, 60, 1].map((d, i) => {
    const v = Number(process.argv[2 + i] ?? d);
    if (!Number.isInteger(v) || v < 1) throw new RangeError(`argument ${i + 1} must be a positive integer, got "${process.argv[2 + i]}"`);
    return v;
  });
  const s = gateSettingsWithDefaults({});
  console.log(
    `heldout reuse: ${seeds} campaigns × ${gates} gates, no true improvement (τ ${TAU} per item, best of ${TRIES} on public), ` +
      `${N.public}/${N.heldout}/${N.test} public/held-out/test items, ${RESAMPLES} resamples; load ${loadAverage()}`,
  );
  console.log(
    `new gate: α ${s.alpha} for the campaign (LORD++ W0 ${s.alpha * s.alphaSpending.initialWealth}, γ ∝ j^-${s.alphaSpending.decay}), ` +
      `Thresholdout B ${s.heldoutBudget.queries}, T ${s.heldoutBudget.threshold} SE, σ ${s.heldoutBudget.noiseScale} SE; today's: α ${s.alpha} per gate`,
  );
  const t0 = Date.now();
  const today: ArmResult[] = [];
  const budgeted: ArmResult[] = [];
  for (let k = 0; k < seeds; k++) {
    today.push(campaign(seed0 * 100_003 + k, gates, false));
    budgeted.push(campaign(seed0 * 100_003 + k, gates, true));
  }
  for (const line of [...report("today's gate", today), ...report('new gate', budgeted)]) console.log(line);
  const spent = budgeted.map((r) => r.spent);
  console.log(
    `  held-out budget                mean ${mean(spent).toFixed(1)} of ${s.heldoutBudget.queries} units spent per suite version (max ${Math.max(...spent)}), ${budgeted.reduce((a, r) => a + r.refused, 0)} gates refused`,
  );
  // What the new gate costs: candidates truly better by 2 standard errors of the held-out gain, 20 gates per campaign;
  // and whether what it claims for them holds on the sealed test split.
  const gain = (2 * TAU) / Math.sqrt(N.heldout);
  const powerSeeds = Math.max(1, Math.ceil(seeds / 2));
  const honest = (budgetedArm: boolean) =>
    Array.from({ length: powerSeeds }, (_, k) => campaign(seed0 * 100_003 + 50_000 + k, 20, budgetedArm, gain));
  const powerOf = (runs: ArmResult[]) => {
    const drift = runs.flatMap((r) => r.claims.map((c) => c.claim - c.test));
    const rate = runs.reduce((a, r) => a + r.promotions, 0) / runs.reduce((a, r) => a + r.gates, 0);
    const d = drift.length ? `${f4(mean(drift))} ± ${(2 * Math.sqrt(sampleVariance(drift) / drift.length)).toFixed(4)}` : 'none';
    return `promoted per gate ${rate.toFixed(3)}, claim − test gain ${d}`;
  };
  console.log(`power: candidates truly better by ${gain.toFixed(4)} (2 SE), ${powerSeeds} campaigns × 20 gates:`);
  console.log(`  today's gate ${powerOf(honest(false))}`);
  console.log(`  new gate     ${powerOf(honest(true))}`);
  const anyNew = budgeted.filter((r) => r.promotions > 0).length / seeds;
  console.log(
    `target: new gate's campaign-wide false-promotion rate ${anyNew.toFixed(3)} ${anyNew <= s.alpha ? '≤' : '>'} α ${s.alpha}; ${((Date.now() - t0) / 1000).toFixed(1)} s, load ${loadAverage()}`,
  );
}

try {
  main();
} catch (e) {
  console.error(`heldout-reuse: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
