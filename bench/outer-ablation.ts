// The outer loop's central claim, measured: does an outer iteration's gain come from user signals, or from training
// longer? On the arithmetic task (tasks/arithmetic), three arms with equal training compute (one experiment per
// iteration at one pinned configuration: the same steps, batch and example length, so the same tokens) run the
// same outer iterations from the same seeds, differing only in `outerLoop.signals`:
//   critique   — ["reference", "revision", "critique"]: the teacher's critiques reach the weights;
//   reference  — ["reference"]: the verified correction only (the default);
//   none       — []: no feedback-derived examples (continued training on the base data).
// Iteration 0 (no production model yet, so no users) is the same bootstrap in every arm; iterations 1..N each get the
// task's simulated users' feedback on the production model first. Prints the held-out pass rate of the production
// model, overall and per category, per arm and iteration (mean ± sd over seeds), then which arm differences are
// above noise: |Δ| > 2σ, σ = √(sd_a²/n + sd_b²/n) over the n seeds (seed spread only; n = 3 makes σ rough).
// The base data's share of what training draws is the same in every arm that has feedback (SHARES): the arms differ
// in where their feedback targets come from, not in how much of training they take.
// The base dataset is 1800 training sums with CARRY_SHARE of them carrying (default 0.1; the task's own draw is about
// 0.64, and its pool holds about 1930 sums that do not carry, so 1800 is the most a share of 0.1 can fill): a first
// dataset that lacks what most users ask (three in four care about sums that carry), the case the outer loop exists
// for. CARRY_SHARE "natural" keeps the task's own draw (where the model saturates after the bootstrap and no arm can
// gain: the earlier figures in docs/outer-loop.md).
// Run: node bin/run-ts.js bench/outer-ablation.ts [ITERATIONS] [SEEDS] [USER_EVENTS] [STEPS] [CARRY_SHARE]
//      (defaults 3, 3, 300, 1000, 0.1)
import fs from 'node:fs';
import os from 'node:os';
import { parse } from 'yaml';
import { startBenchStack } from './lib/bench-stack';
import { addArithmeticTask, benchSession } from './lib/arithmetic-task-files';
import { arithmeticUsers } from '../tasks/arithmetic/simulated-users';
import { exampleTask } from '../services/example-tasks';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { heldoutMetricsOf } from '../services/queries/heldout-metrics';
import { productionCheckpointOf } from '../services/production-model';
import { mean, sampleVariance } from '../core/gate/paired-test';
import { runOuterDemo } from '../cli/outer-demo';
import { pickMetrics } from '../cli/task-demo';
import { sql } from 'drizzle-orm';
import { loadAverage } from './lib/load-average';

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

async function main(): Promise<void> {
  const [iterations, seeds, events, steps] = [3, 3, 300, 1000].map((d, i) => Number(process.argv[2 + i] ?? d));
  const share = process.argv[6] ?? '0.1';
  const sizes = share === 'natural' ? {} : { train: 1800, trainCarryShare: Number(share) };
  const t0 = Date.now();
  const since = () => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
  const stack = await startBenchStack(55497);
  try {
    console.log(`outer-loop ablation on the arithmetic task: ${os.cpus().length} cores, load ${loadAverage()}`);
    console.log(
      `settings: ${iterations} outer iterations after the bootstrap, seeds 1..${seeds}, ${events} user events per iteration; ` +
        `every iteration trains 1 experiment of ${steps} steps (batch 64) at ${JSON.stringify(PINNED)}, warm-started from production; ` +
        `built-in trainer; mixWeights ${JSON.stringify(MIX)}, sourceShares ${JSON.stringify(SHARES)}; gate at its defaults except promotion.noise.seeds 0 (σ from items only, to keep the bench affordable)`,
    );
    console.log(
      `base dataset: ${share === 'natural' ? '3000 training sums, as the task draws them' : `1800 training sums, ${share} of them carrying`}`,
    );
    const env = addArithmeticTask(stack, 1, () => undefined, sizes);
    const session = benchSession(stack, env);
    /** results[arm][iteration][seed]: the production model's held-out metrics after that iteration. */
    const results: Record<string, (Record<string, number> | undefined)[][]> = {};
    const status: Record<string, string[]> = {};
    for (let seed = 1; seed <= seeds; seed++) {
      for (const [arm, signals] of Object.entries(ARMS)) {
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
        const { versionId, spec } = await registerCampaignVersion(stack.db.db, raw);
        for (let i = 0; i <= iterations; i++) {
          const r = await runOuterDemo(session, spec, versionId, {
            iterations: 1,
            events,
            seed,
            json: false,
            users: arithmeticUsers(seed),
          });
          const it = r.iterations.at(-1)!;
          const production = await productionCheckpointOf(stack.db.db, spec.name);
          ((results[arm] ??= [])[i] ??= [])[seed - 1] = production ? await heldoutMetricsOf(stack.db.db, production) : undefined;
          (status[arm] ??= []).push(`s${seed}i${i}:${it.status[0]}`);
        }
        console.log(`seed ${seed}, arm ${arm}: done (${since()}, load ${loadAverage()})`);
      }
    }

    const trained = await stack.db.db.execute(sql`
      SELECT split_part(e.campaign_id, '-', 2) AS arm, count(*)::int AS runs, sum((e.params->>'steps')::int)::int AS steps
      FROM experiments e JOIN training_runs t ON t.experiment_id = e.id
      WHERE e.campaign_id LIKE 'abl-%' AND e.proposer <> 'baseline' GROUP BY 1 ORDER BY 1`);
    console.log(`\ntraining compute per arm (all seeds; experiments other than the zero-step baselines):`);
    for (const r of trained.rows as { arm: string; runs: number; steps: number | null }[])
      console.log(`  ${r.arm.padEnd(10)} ${r.runs} runs, ${r.steps ?? `${r.runs} × ${steps}`} steps`);

    // What each arm's feedback added: the examples of its last version by source (the base's are `corpus`).
    const added = await stack.db.db.execute(sql`
      SELECT split_part(d.campaign_id, '-', 2) AS arm, e.source, count(*)::int AS n, round(avg(e.weight)::numeric, 2)::float AS weight,
        sum(e.weight * (v.mix_weights->>e.source)::float * coalesce((v.loss_weights->>e.category)::float, 1))::float AS drawn
      FROM examples e JOIN dataset_versions v ON v.id = e.dataset_version_id JOIN datasets d ON d.id = v.dataset_id
      WHERE d.campaign_id LIKE 'abl-%' AND v.id IN (
        SELECT DISTINCT ON (v2.dataset_id) v2.id FROM dataset_versions v2 JOIN datasets d2 ON d2.id = v2.dataset_id
        WHERE d2.campaign_id LIKE 'abl-%' ORDER BY v2.dataset_id, v2.created_at DESC)
      GROUP BY 1, 2 ORDER BY 1, 2`);
    console.log(
      `\nexamples in each arm's last dataset version, by source (summed over seeds; mean example weight; share of what training draws):`,
    );
    const rows = added.rows as { arm: string; source: string; n: number; weight: number; drawn: number }[];
    const drawnOf = (arm: string) => rows.filter((r) => r.arm === arm).reduce((a, r) => a + r.drawn, 0);
    for (const r of rows)
      console.log(
        `  ${r.arm.padEnd(10)} ${r.source.padEnd(10)} ${String(r.n).padStart(6)}  weight ${r.weight}  drawn ${((100 * r.drawn) / drawnOf(r.arm)).toFixed(1)}%`,
      );

    const all = Object.values(results).flatMap((its) => its.flat());
    // The canary category holds the suite's canary items, which no honest model passes: not a skill to compare.
    const metrics = pickMetrics(...all).filter((m) => m !== 'category.canary');
    const fmt = (xs: number[]) => (xs.length ? `${mean(xs).toFixed(3)}±${Math.sqrt(sampleVariance(xs)).toFixed(3)}` : '-');
    const valuesOf = (arm: string, i: number, m: string) => (results[arm][i] ?? []).flatMap((r) => (r?.[m] === undefined ? [] : [r[m]]));
    console.log(`\nheld-out pass rate of the production model after each iteration: mean±sd over ${seeds} seeds (${since()} in all)`);
    console.log(
      `  ${'metric'.padEnd(26)} ${'arm'.padEnd(10)} ${Array.from({ length: iterations + 1 }, (_, i) => `iter ${i}`.padStart(13)).join('')}`,
    );
    for (const m of metrics)
      for (const arm of Object.keys(ARMS))
        console.log(
          `  ${m.padEnd(26)} ${arm.padEnd(10)} ${Array.from({ length: iterations + 1 }, (_, i) => fmt(valuesOf(arm, i, m)).padStart(13)).join('')}`,
        );
    console.log(`\nabove noise? |Δ| > 2σ, σ = √(sd_a²/n + sd_b²/n) over seeds (the last iteration, ${iterations}):`);
    const arms = Object.keys(ARMS);
    for (const m of metrics)
      for (let a = 0; a < arms.length; a++)
        for (let b = a + 1; b < arms.length; b++) {
          const [xa, xb] = [valuesOf(arms[a], iterations, m), valuesOf(arms[b], iterations, m)];
          if (xa.length < 2 || xb.length < 2) continue;
          const d = mean(xa) - mean(xb);
          const sigma = Math.sqrt(sampleVariance(xa) / xa.length + sampleVariance(xb) / xb.length);
          const verdict = Math.abs(d) > 2 * sigma ? 'ABOVE noise' : 'within noise';
          console.log(
            `  ${m.padEnd(26)} ${`${arms[a]} − ${arms[b]}`.padEnd(22)} Δ ${d >= 0 ? '+' : ''}${d.toFixed(3)}  2σ ${(2 * sigma).toFixed(3)}  ${verdict}`,
          );
        }
    console.log(
      `\ngate decisions (p promoted, r rejected, n no candidate, s skipped): ${Object.entries(status)
        .map(([a, s]) => `${a}: ${s.join(' ')}`)
        .join('; ')}`,
    );
    console.log(`load at the end: ${loadAverage()}`);
  } finally {
    await stack.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
