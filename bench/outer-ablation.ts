// The outer loop's central claim, measured: does an outer iteration's gain come from user signals, or from training
// longer? On the arithmetic task (tasks/arithmetic), three arms with equal training compute (one experiment per
// iteration at one pinned configuration: the same steps, batch and example length, so the same tokens) run the
// same outer iterations from the same seeds, differing only in `outerLoop.signals`:
//   critique   — ["reference", "revision", "critique"]: the teacher's critiques reach the weights;
//   reference  — ["reference"]: the verified correction only (the default);
//   none       — []: no feedback-derived examples (continued training on the base data).
// Iteration 0 (no production model yet, so no users) is the same bootstrap in every arm; iterations 1..N each get the
// task's simulated users' feedback on the production model first.
// Each task seed is a different draw of the task's items (tasks/arithmetic/split.ts: training sums, public, held-out
// and sealed test problems, and the users' pool) on a stack of its own (a suite's items would otherwise contaminate
// the next seed's training data); the seed is also the inner loop's and the simulated users' seed.
// Two figures per arm and iteration, mean ± sd over task seeds:
//   - the SELECTED figure, production's held-out pass rate: the split the gate chose production on, so it can only
//     rise by construction (the gate blocks held-out regressions);
//   - the REPORTED figure, production's pass rate on the sealed test split, which no loop decision reads (the outer
//     loop scores each newly promoted model on it for the record, workflows/outer-loop-sealed-test.ts).
// The comparisons are made on the test split only, at the last iteration: each arm's gain over its bootstrap and each
// pair of arms, overall and per category, each a paired t-test across task seeds (df = seeds − 1, two-sided), with
// Holm–Bonferroni adjusted p-values over all of them (core/stats/).
// The base data's share of what training draws is the same in every arm that has feedback (SHARES): the arms differ
// in where their feedback targets come from, not in how much of training they take.
// The base dataset is 1700 training sums with CARRY_SHARE of them carrying (default 0.1; the task's own draw is about
// 0.64): a first dataset that lacks what most users ask (three in four care about sums that carry), the case the outer
// loop exists for. The eval sets leave 1630 sums that do not carry; 1530 of them train at a share of 0.1, and the
// other 100 are the sealed test split's no-carry items (100 a category: TEST_PER_CATEGORY). CARRY_SHARE "natural"
// keeps the task's own draw of 3000 (where the model saturates after the bootstrap and no arm can gain).
// Run: node bin/run-ts.js bench/outer-ablation.ts [ITERATIONS] [SEEDS] [USER_EVENTS] [STEPS] [CARRY_SHARE]
//      (defaults 3, 5, 300, 1000, 0.1)
import fs from 'node:fs';
import os from 'node:os';
import { parse } from 'yaml';
import { sql } from 'drizzle-orm';
import { BASELINE_PROPOSER } from '../contracts/experiment';
import { startBenchStack, type BenchStack } from './lib/bench-stack';
import { addArithmeticTask, benchSession } from './lib/arithmetic-task-files';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';
import { arithmeticUsers } from '../tasks/arithmetic/simulated-users';
import { splitProblems, type SplitSizes } from '../tasks/arithmetic/split';
import { categoryOf } from '../tasks/arithmetic/problems';
import { exampleTask } from '../services/example-tasks';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { heldoutMetricsOf } from '../services/queries/heldout-metrics';
import { productionCheckpointOf } from '../services/production-model';
import { mean, sampleVariance } from '../core/gate/paired-test';
import { holmAdjust } from '../core/stats/holm';
import { pairedTTest } from '../core/stats/paired-t-test';
import { runOuterDemo } from '../cli/outer-demo';
import { pickMetrics } from '../cli/task-demo';

const ARMS: Record<string, string[]> = { critique: ['reference', 'revision', 'critique'], reference: ['reference'], none: [] };
/** One configuration for every arm and iteration (a good corner of the task's space, docs/tasks.md). */
const PINNED = { lr: 0.01, hidden: 96, embed: 12, context: 12 };
/**
 * outerLoop.mixWeights for every arm: the feedback's SFT targets (reference corrections, verified revisions) weigh 8×
 * a base example, the critic examples 1×. At the default (critique 2) the ~50 corrections an iteration of 300 events
 * yields are 7 % of what training draws and move nothing a 3-seed table can see; the arms still train the same steps.
 */
const MIX = { user: 1, critique: 8, revision: 8, critic: 1 };
/**
 * outerLoop.sourceShares for every arm: the base examples take half of what training draws (examples are drawn by
 * effective weight, one example a draw), the feedback-derived sources the other half, split among them by MIX. Without
 * it the critique arm's critic examples, as many as its corrections, took draws from the base and the corrections
 * alike, so its feedback took a larger share than the reference arm's: the comparison measured the mix, not the signal.
 */
const SHARES = { user: 0.5 };
/** Sealed test items a category: as many no-carry sums as 1700 training sums at a carry share of 0.1 leave. */
const TEST_PER_CATEGORY = 100;
/** The family-wise level the Holm-adjusted p-values are read at. */
const ALPHA = 0.05;
const SPLITS = ['heldout', 'test'] as const;
type Split = (typeof SPLITS)[number];

interface Settings {
  iterations: number;
  seeds: number;
  events: number;
  steps: number;
  share: string;
  sizes: SplitSizes;
}

type Metrics = Record<string, number> | undefined;
/** results[split][arm][iteration][seed − 1]: the production model's metrics on that split after that iteration. */
type Results = Record<Split, Record<string, Metrics[][]>>;

/** The arguments, or one line on what is wrong and exit 2 before anything starts. */
function settingsOf(argv: string[]): Settings {
  const [iterations, seeds, events, steps] = [3, 5, 300, 1000].map((d, i) => {
    const v = Number(argv[i] ?? d);
    const least = i === 1 ? 2 : i === 0 ? 0 : 1;
    if (!Number.isInteger(v) || v < least) {
      const name = ['ITERATIONS', 'SEEDS', 'USER_EVENTS', 'STEPS'][i];
      console.error(`outer-ablation: ${name} must be a whole number ≥ ${least}, not "${argv[i]}"`);
      process.exit(2);
    }
    return v;
  });
  const share = argv[4] ?? '0.1';
  if (share !== 'natural' && !(Number(share) >= 0 && Number(share) <= 1)) {
    console.error(`outer-ablation: CARRY_SHARE must be "natural" or a number in [0, 1], not "${share}"`);
    process.exit(2);
  }
  const test = { testPerCategory: TEST_PER_CATEGORY };
  const sizes = share === 'natural' ? test : { ...test, train: 1700, trainCarryShare: Number(share) };
  return { iterations, seeds, events, steps, share, sizes };
}

/** The arithmetic spec of one arm at one task seed, pinned to one configuration and one experiment an iteration. */
function armSpec(arm: string, signals: string[], seed: number, steps: number): Record<string, unknown> {
  const raw = parse(fs.readFileSync(exampleTask('arithmetic').spec, 'utf8')) as Record<string, Record<string, unknown>>;
  raw.name = `abl-${arm}-s${seed}` as never;
  raw.trainer.fixed = { ...(raw.trainer.fixed as object), steps };
  raw.searchSpace = Object.fromEntries(Object.entries(PINNED).map(([k, v]) => [k, { type: 'categorical', choices: [v] }]));
  raw.innerLoop = {
    ...raw.innerLoop,
    seed,
    budget: { experiments: 1, parallelism: 1 },
    batchSize: 1,
    startupTrials: 0,
    pruning: { rule: 'none' },
  };
  raw.outerLoop = {
    ...raw.outerLoop,
    signals,
    mixWeights: MIX,
    sourceShares: SHARES,
    minNewFeedback: 0,
    evalFailureSample: 20,
    innerBudget: { experiments: 1 },
    teacher: { task: 'arithmetic' },
    promotion: { ...(raw.outerLoop.promotion as object), noise: { seeds: 0 } },
  };
  return raw;
}

interface Tallies {
  /** Per arm: training runs and steps (experiments other than the zero-step baselines), summed over seeds. */
  compute: Map<string, { runs: number; steps: number }>;
  /** Per arm and source: examples of each seed's last dataset version, their summed weight, and what training draws. */
  examples: Map<string, { arm: string; source: string; n: number; weight: number; drawn: number }>;
  /** Per arm: the gate's decisions, `s<seed>i<iteration>:<p|r|n|s>`. */
  status: Record<string, string[]>;
}

/** One task seed on a stack of its own: every arm's bootstrap and iterations, then what each arm trained on. */
async function runSeed(seed: number, o: Settings, results: Results, tallies: Tallies, stack: BenchStack): Promise<void> {
  const env = addArithmeticTask(stack, seed, () => undefined, o.sizes);
  const session = benchSession(stack, env);
  for (const [arm, signals] of Object.entries(ARMS)) {
    const { versionId, spec } = await registerCampaignVersion(stack.db.db, armSpec(arm, signals, seed, o.steps));
    for (let i = 0; i <= o.iterations; i++) {
      const r = await runOuterDemo(session, spec, versionId, {
        iterations: 1,
        events: o.events,
        seed,
        json: false,
        users: arithmeticUsers(seed),
      });
      const production = await productionCheckpointOf(stack.db.db, spec.name);
      for (const split of SPLITS)
        ((results[split][arm] ??= [])[i] ??= [])[seed - 1] = production
          ? await heldoutMetricsOf(stack.db.db, production, split)
          : undefined;
      (tallies.status[arm] ??= []).push(`s${seed}i${i}:${r.iterations.at(-1)!.status[0]}`);
    }
  }
  const trained = await stack.db.db.execute(sql`
    SELECT split_part(e.campaign_id, '-', 2) AS arm, count(*)::int AS runs, coalesce(sum((e.params->>'steps')::int), 0)::int AS steps
    FROM experiments e JOIN training_runs t ON t.experiment_id = e.id
    WHERE e.campaign_id LIKE 'abl-%' AND e.proposer <> ${BASELINE_PROPOSER} GROUP BY 1`);
  for (const r of trained.rows as { arm: string; runs: number; steps: number }[]) {
    const c = tallies.compute.get(r.arm) ?? { runs: 0, steps: 0 };
    // A run whose params do not name its steps trained the pinned number.
    tallies.compute.set(r.arm, { runs: c.runs + r.runs, steps: c.steps + (r.steps || r.runs * o.steps) });
  }
  // What each arm's feedback added: the examples of its last version by source (the base's are `corpus`).
  const added = await stack.db.db.execute(sql`
    SELECT split_part(d.campaign_id, '-', 2) AS arm, e.source, count(*)::int AS n, sum(e.weight)::float AS weight,
      sum(e.weight * (v.mix_weights->>e.source)::float * coalesce((v.loss_weights->>e.category)::float, 1))::float AS drawn
    FROM examples e JOIN dataset_versions v ON v.id = e.dataset_version_id JOIN datasets d ON d.id = v.dataset_id
    WHERE d.campaign_id LIKE 'abl-%' AND v.id IN (
      SELECT DISTINCT ON (v2.dataset_id) v2.id FROM dataset_versions v2 JOIN datasets d2 ON d2.id = v2.dataset_id
      WHERE d2.campaign_id LIKE 'abl-%' ORDER BY v2.dataset_id, v2.created_at DESC)
    GROUP BY 1, 2`);
  for (const r of added.rows as { arm: string; source: string; n: number; weight: number; drawn: number }[]) {
    const key = `${r.arm}\t${r.source}`;
    const t = tallies.examples.get(key) ?? { arm: r.arm, source: r.source, n: 0, weight: 0, drawn: 0 };
    tallies.examples.set(key, { ...t, n: t.n + r.n, weight: t.weight + r.weight, drawn: t.drawn + r.drawn });
  }
}

function printTallies(t: Tallies): void {
  console.log(`\ntraining compute per arm (all seeds; experiments other than the zero-step baselines):`);
  for (const arm of Object.keys(ARMS)) {
    const c = t.compute.get(arm);
    console.log(`  ${arm.padEnd(10)} ${c ? `${c.runs} runs, ${c.steps} steps` : 'none'}`);
  }
  console.log(
    `\nexamples in each arm's last dataset version, by source (summed over seeds; mean example weight; share of what training draws):`,
  );
  const rows = [...t.examples.values()].sort((a, b) => a.arm.localeCompare(b.arm) || a.source.localeCompare(b.source));
  const drawnOf = (arm: string) => rows.filter((r) => r.arm === arm).reduce((a, r) => a + r.drawn, 0);
  for (const r of rows)
    console.log(
      `  ${r.arm.padEnd(10)} ${r.source.padEnd(10)} ${String(r.n).padStart(6)}  weight ${(r.weight / r.n).toFixed(2)}  drawn ${((100 * r.drawn) / drawnOf(r.arm)).toFixed(1)}%`,
    );
}

/** Per seed (undefined where that seed has no figure) of one split, arm, iteration and metric. */
function perSeed(results: Results, split: Split, arm: string, i: number, m: string, seeds: number): (number | undefined)[] {
  return Array.from({ length: seeds }, (_, s) => results[split][arm]?.[i]?.[s]?.[m]);
}

const defined = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined);

function printTable(results: Results, split: Split, metrics: string[], o: Settings, title: string): void {
  const fmt = (xs: number[]) =>
    xs.length ? `${mean(xs).toFixed(3)}±${Math.sqrt(sampleVariance(xs)).toFixed(3)}${xs.length < o.seeds ? `(${xs.length})` : ''}` : '-';
  console.log(`\n${title}: mean±sd over ${o.seeds} task seeds ("(k)": only k seeds had a figure)`);
  console.log(
    `  ${'metric'.padEnd(26)} ${'arm'.padEnd(10)} ${Array.from({ length: o.iterations + 1 }, (_, i) => `iter ${i}`.padStart(16)).join('')}`,
  );
  for (const m of metrics)
    for (const arm of Object.keys(ARMS))
      console.log(
        `  ${m.padEnd(26)} ${arm.padEnd(10)} ${Array.from({ length: o.iterations + 1 }, (_, i) => fmt(defined(perSeed(results, split, arm, i, m, o.seeds))).padStart(16)).join('')}`,
      );
}

/** A paired test's two sides, seed by seed, kept where both have a figure. */
function paired(a: (number | undefined)[], b: (number | undefined)[]): [number[], number[]] {
  const keep = a.map((x, s) => x !== undefined && b[s] !== undefined);
  return [defined(a.filter((_, s) => keep[s])), defined(b.filter((_, s) => keep[s]))];
}

/** The comparisons on the sealed test split at the last iteration, paired t-tests across seeds, Holm-adjusted together. */
function printComparisons(results: Results, metrics: string[], o: Settings): void {
  const last = o.iterations;
  const arms = Object.keys(ARMS);
  const tests: { metric: string; what: string; a: number[]; b: number[] }[] = [];
  for (const m of metrics) {
    for (const arm of arms) {
      const [a, b] = paired(perSeed(results, 'test', arm, last, m, o.seeds), perSeed(results, 'test', arm, 0, m, o.seeds));
      tests.push({ metric: m, what: `${arm}: iter ${last} − iter 0`, a, b });
    }
    for (let x = 0; x < arms.length; x++)
      for (let y = x + 1; y < arms.length; y++) {
        const [a, b] = paired(perSeed(results, 'test', arms[x], last, m, o.seeds), perSeed(results, 'test', arms[y], last, m, o.seeds));
        tests.push({ metric: m, what: `${arms[x]} − ${arms[y]} at iter ${last}`, a, b });
      }
  }
  const runs = tests.map((t) => pairedTTest(t.a, t.b));
  const adjusted = holmAdjust(runs.map((r) => r.p));
  const counted = runs.filter((r) => !Number.isNaN(r.p)).length;
  console.log(
    `\nwhat the sealed test split shows: paired t-tests across task seeds (df = seeds − 1, two-sided), ` +
      `Holm–Bonferroni over the ${counted} tests below (p_holm ≤ ${ALPHA} holds the chance of any false claim among them to ${ALPHA})`,
  );
  console.log(
    `  ${'metric'.padEnd(26)} ${'comparison'.padEnd(30)} ${'n'.padStart(2)} ${'Δ'.padStart(7)} ${'se'.padStart(6)} ${'t'.padStart(7)} ${'p'.padStart(7)} ${'p_holm'.padStart(7)}`,
  );
  const f = (v: number, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : String(v));
  tests.forEach((t, k) => {
    const r = runs[k];
    const verdict = Number.isNaN(adjusted[k]) ? 'not testable' : adjusted[k] <= ALPHA ? 'SIGNIFICANT' : 'not significant';
    console.log(
      `  ${t.metric.padEnd(26)} ${t.what.padEnd(30)} ${String(r.n).padStart(2)} ${`${r.delta >= 0 ? '+' : ''}${f(r.delta)}`.padStart(7)} ${f(r.se).padStart(6)} ${f(r.t, 2).padStart(7)} ${f(r.p).padStart(7)} ${f(adjusted[k]).padStart(7)}  ${verdict}`,
    );
  });
  console.log(`\nproduction's test pass rate at iter ${last}, seed by seed:`);
  for (let s = 0; s < o.seeds; s++)
    console.log(
      `  seed ${s + 1}: ${arms.map((arm) => `${arm} ${results.test[arm]?.[last]?.[s]?.pass_rate?.toFixed(3) ?? '-'}`).join(', ')}`,
    );
}

async function main(): Promise<void> {
  const o = settingsOf(process.argv.slice(2));
  const t0 = Date.now();
  const since = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
  console.log(`outer-loop ablation on the arithmetic task: ${os.cpus().length} cores, load ${loadAverage()}`);
  console.log(
    `settings: ${o.iterations} outer iterations after the bootstrap, task seeds 1..${o.seeds} (each its own item draw, stack, inner-loop and users' seed), ` +
      `${o.events} user events per iteration; every iteration trains 1 experiment of ${o.steps} steps (batch 64) at ${JSON.stringify(PINNED)}, warm-started from production; ` +
      `built-in trainer; mixWeights ${JSON.stringify(MIX)}, sourceShares ${JSON.stringify(SHARES)}; gate at its defaults except promotion.noise.seeds 0 (σ from items only, to keep the bench affordable)`,
  );
  const split = splitProblems(1, o.sizes);
  const count = (c: string) => split.test.filter((p) => categoryOf(p) === c).length;
  console.log(
    `base dataset: ${o.share === 'natural' ? '3000 training sums, as the task draws them' : `1700 training sums, ${o.share} of them carrying`}; ` +
      `held-out ${split.heldout.length} items, sealed test ${split.test.length} (seed 1: ${count('carry')} carry, ${count('no-carry')} no-carry)`,
  );
  const results: Results = { heldout: {}, test: {} };
  const tallies: Tallies = { compute: new Map(), examples: new Map(), status: {} };
  for (let seed = 1; seed <= o.seeds; seed++) {
    const stack = await startBenchStack(55497);
    try {
      await runSeed(seed, o, results, tallies, stack);
    } finally {
      await stack.stop();
    }
    console.log(`task seed ${seed}: every arm done (${since()}, load ${loadAverage()})`);
  }
  printTallies(tallies);
  const all = SPLITS.flatMap((s) => Object.values(results[s]).flatMap((its) => its.flat()));
  // The canary category holds the suite's canary items, which no honest model passes: not a skill to compare.
  const metrics = pickMetrics(...all).filter((m) => m !== 'category.canary');
  printTable(
    results,
    'heldout',
    metrics,
    o,
    `SELECTED figure, production's held-out pass rate (the split the gate chose it on: it can only rise)`,
  );
  printTable(results, 'test', metrics, o, `REPORTED figure, production's pass rate on the sealed test split (no decision read it)`);
  printComparisons(results, metrics, o);
  console.log(
    `\ngate decisions (p promoted, r rejected, n no candidate, s skipped): ${Object.entries(tallies.status)
      .map(([a, s]) => `${a}: ${s.join(' ')}`)
      .join('; ')}`,
  );
  console.log(`${since()} in all; load at the end: ${loadAverage()}`);
}

runBench(main);
