// What a patch costs beyond a knob experiment (issue 37): per patch, the checks (checkPatch: size, mutable files,
// duplicate and near-duplicate against every patch tried so far, git apply and commit on the base, py_compile in the
// trainers' sandbox), apply and commit alone (applyPatch, the same git work outside the checks), materializing the
// commit as the read-only folder a trainer runs (materializeRecipe) and recording the patch row (recordPatch); beside,
// in the same run and on the same stack, the wall time of a plain knob experiment (an `experiment` child, from its
// workflow's start to its close) with the no-op fixture trainer, the trainer the recipe holds too. N distinct
// patches, each changing the recipe's Python file, so each is new to the duplicate checks and each compiles.
// Prints median and p95 per step, the overhead's share of a knob experiment, and the load average.
//   node bin/run-ts.js bench/code-experiments.ts [N]   (default 20)
import fs from 'node:fs';
import path from 'node:path';
import { checkPatch } from '../activities/recipes/check-patch';
import { probeSandbox } from '../backends/sandbox/bubblewrap';
import { registerCampaignVersion } from '../services/campaigns/campaign-versions';
import { loopExperiments } from '../services/inner-loops';
import { applyPatch } from '../services/recipes/apply-patch';
import { importRecipe } from '../services/recipes/import-recipe';
import { materializeRecipe } from '../services/recipes/materialize-recipe';
import { recordPatch, triedPatches } from '../services/recipes/recipe-patches';
import { recipeRepoOf, recipeTreeOf } from '../services/recipes/recipe-repo';
import { BASELINE_PROPOSER } from '../contracts/experiment';
import { fixtureSpec } from '../test/helpers/specs';
import { quantile, startBenchStack, type BenchStack } from './lib/bench-stack';
import { loadAverage } from './lib/load-average';
import { runBench } from './lib/run-bench';

const N = Number(process.argv[2] ?? 20);
const CAMPAIGN = 'code-bench';
const FIXTURE_TRAINER = path.join(__dirname, '..', 'test', 'fixtures', 'fixture-trainer.js');

/** The recipe: the no-op trainer and a Python module of knobs a patch edits. */
function writeRecipe(dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(FIXTURE_TRAINER, path.join(dir, 'fixture-trainer.js'));
  fs.writeFileSync(path.join(dir, 'schedule.py'), 'WARMUP_STEPS = 0\n\n\ndef lr_at(step, lr):\n    return lr\n');
}

/** Patch i: a warm-up of i+1 steps, a change no earlier patch made. */
const patchOf = (i: number) => `diff --git a/schedule.py b/schedule.py
--- a/schedule.py
+++ b/schedule.py
@@ -1,5 +1,5 @@
-WARMUP_STEPS = 0
+WARMUP_STEPS = ${i + 1}
 
 
 def lr_at(step, lr):
-    return lr
+    return lr * min(1.0, (step + 1) / ${i + 1})
`;

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

interface PatchTimes {
  check: number;
  applyCommit: number;
  materialize: number;
  record: number;
}

async function patchSide(stack: BenchStack, unsandboxed: boolean): Promise<PatchTimes[]> {
  const src = path.join(stack.home, 'recipe-src');
  writeRecipe(src);
  const base = await importRecipe(stack.home, CAMPAIGN, src);
  const db = stack.db.db;
  const out: PatchTimes[] = [];
  for (let i = 0; i < N; i++) {
    const diff = patchOf(i);
    const tried = await triedPatches(db, CAMPAIGN);
    let t = process.hrtime.bigint();
    const checked = await checkPatch({
      home: stack.home,
      campaign: CAMPAIGN,
      baseCommit: base,
      diff,
      mutable: ['schedule.py'],
      maxBytes: 20_000,
      tried,
      unsandboxed,
    });
    const check = ms(t);
    if (!checked.ok) throw new Error(`patch ${i} refused: ${checked.reason}`);
    t = process.hrtime.bigint();
    const again = applyPatch(recipeRepoOf(stack.home, CAMPAIGN), base, diff, `patch ${checked.normalizedHash.slice(0, 12)}`);
    const applyCommit = ms(t);
    if (!again.ok || again.commit !== checked.commit) throw new Error(`patch ${i}: applying it again made another commit`);
    t = process.hrtime.bigint();
    materializeRecipe(stack.home, CAMPAIGN, checked.commit, recipeTreeOf(stack.home, CAMPAIGN, checked.commit));
    const materialize = ms(t);
    t = process.hrtime.bigint();
    await recordPatch(db, {
      id: `${CAMPAIGN}/bench/p${i}`,
      campaignId: CAMPAIGN,
      innerLoopId: `${CAMPAIGN}/bench`,
      baseCommit: base,
      commit: checked.commit,
      diff,
      normalizedHash: checked.normalizedHash,
      summary: checked.summary,
      proposer: 'researcher:bench',
      status: 'accepted',
    });
    out.push({ check, applyCommit, materialize, record: ms(t) });
  }
  return out;
}

/** Wall time (ms) of each knob experiment's `experiment` child: N no-op experiments, one at a time. */
async function knobSide(stack: BenchStack, unsandboxed: boolean): Promise<number[]> {
  const name = 'knob-bench';
  const base = fixtureSpec(
    name,
    { steps: 1, sleepMs: 0 },
    { budget: { experiments: N, parallelism: 1 }, batchSize: 1, plateau: { patience: 1000 } },
  );
  const spec = { ...base, trainer: { ...base.trainer, unsandboxed } };
  const { versionId } = await registerCampaignVersion(stack.db.db, spec);
  const innerLoopId = `${name}/inner/1`;
  await stack.client.workflow.execute('innerLoop', {
    taskQueue: `${stack.prefix}-orchestration`,
    workflowId: innerLoopId,
    args: [{ campaignVersionId: versionId }],
  });
  const rows = (await loopExperiments(stack.db.db, innerLoopId)).filter((r) => r.proposer !== BASELINE_PROPOSER);
  const walls: number[] = [];
  for (const r of rows) {
    if (r.status !== 'succeeded') throw new Error(`knob experiment ${r.id} ${r.status}: ${r.error ?? ''}`);
    const d = await stack.client.workflow.getHandle(r.id).describe();
    walls.push(d.closeTime!.getTime() - d.startTime.getTime());
  }
  return walls;
}

const row = (label: string, xs: number[]) =>
  `${label.padEnd(52)}${quantile(xs, 0.5).toFixed(1).padStart(10)}${quantile(xs, 0.95).toFixed(1).padStart(10)}`;

async function main(): Promise<void> {
  const probe = probeSandbox();
  const unsandboxed = !probe.ok;
  const stack = await startBenchStack(55491);
  try {
    const knob = await knobSide(stack, unsandboxed);
    const patches = await patchSide(stack, unsandboxed);
    const pick = (k: keyof PatchTimes) => patches.map((p) => p[k]);
    const overhead = patches.map((p) => p.check + p.materialize + p.record);
    const knobMed = quantile(knob, 0.5);
    console.log(
      `code experiments: ${N} patches and ${N} knob experiments (no-op fixture trainer both sides), py_compile ${unsandboxed ? `unsandboxed (${probe.ok ? '' : probe.reason})` : 'in the sandbox'}; load average ${loadAverage()}`,
    );
    console.log(`${'step'.padEnd(52)}${'median ms'.padStart(10)}${'p95 ms'.padStart(10)}`);
    console.log(row('check (all rules, apply, commit, py_compile)', pick('check')));
    console.log(row('  of which apply + commit (applyPatch alone)', pick('applyCommit')));
    console.log(row('materialize (git archive, read-only tree)', pick('materialize')));
    console.log(row('record (recipe_patches row)', pick('record')));
    console.log(row('per-patch overhead (check + materialize + record)', overhead));
    console.log(row('knob experiment, workflow start to close', knob));
    console.log(
      `per-patch overhead is ${((quantile(overhead, 0.5) / knobMed) * 100).toFixed(1)}% of a no-op knob experiment's median (${quantile(overhead, 0.5).toFixed(0)} of ${knobMed.toFixed(0)} ms); load average at the end ${loadAverage()}`,
    );
  } finally {
    await stack.stop();
  }
}

runBench(main);
