// The gate's error rates over seeds, with its noise check and, beside it in the same run, without (the paired test
// and the margin alone): false rejection (an honest candidate, the same small model trained longer, rejected) and
// false acceptance (a "null" candidate, the incumbent's own recipe from another seed, promoted). Each seed trains
// its own incumbent, honest and null candidates and k = 3 seed reruns of the incumbent's recipe (real charlm runs
// on the built-in task's data), scores them with the real scoreCheckpoint and gates with the real evaluateGate.
// Three gates over the same checkpoints: the noise check as configured by default (a t multiple, items of one source
// file as one cluster, bits per byte byte-weighted), the same with every item its own cluster (`clusterBy: item`), and
// no noise check. The held-out budget and α-spending are off in all three, so the table is the noise check's alone
// (every gate here reads one suite version; its budget would be spent within the first seeds).
// Figures only; nothing here is asserted.
// Run: node bin/run-ts.js bench/gate-noise.ts [SEEDS] [INCUMBENT_STEPS] [HONEST_STEPS]   (defaults 20, 100, 300)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { openDb } from '../db/client';
import { ensureDatabase, startEmbeddedPostgres } from '../db/embedded-server';
import { applyMigrations } from '../db/migrate';
import { decisions } from '../db/schema';
import type { NoiseSummary } from '../core/gate/noise-check';
import { mean } from '../core/gate/paired-test';
import { trainCheckpoint } from '../test/helpers/charlm-checkpoint';
import { plantedCheats } from '../test/helpers/planted-cheats';
import { freePort } from '../test/helpers/ports';
import { loadAverage } from './lib/load-average';
import { runBench, startedList } from './lib/run-bench';

async function main(): Promise<void> {
  const [seeds, incSteps, honestSteps] = [20, 100, 300].map((d, i) => Number(process.argv[2 + i] ?? d));
  console.log(
    `gate noise: ${seeds} seeds, incumbent and null ${incSteps} steps, honest ${honestSteps} steps, k = 3 reruns; ${os.cpus().length} cores, load ${loadAverage()}`,
  );
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-bench-gate-noise-'));
  fs.chmodSync(home, 0o755);
  // Stopped newest first when the bench ends, fails or is stopped by hand: no PostgreSQL or folder left behind.
  const started = startedList('the gate-noise bench');
  // plantedCheats writes its leak files beside the home, in `${home}-leak`.
  started.add(async () => {
    for (const dir of [home, `${home}-leak`]) fs.rmSync(dir, { recursive: true, force: true });
  });
  try {
    const pg = await startEmbeddedPostgres({ dataDir: path.join(home, 'pg'), port: await freePort() });
    started.add(() => pg.stop());
    const url = await ensureDatabase(pg.adminUrl, 'bench');
    await applyMigrations(url);
    const dbh = openDb(url, { max: 4 });
    started.add(() => dbh.close());
    const t0 = Date.now();
    const p = await plantedCheats(dbh.db, home, 'gn');
    const ckpt = async (tag: string, seed: number, steps: number) => {
      const file = await trainCheckpoint({ dir: home, id: `${tag}/step-${steps}`, text: p.trainText, seed, steps });
      const id = await p.candidate('honest', tag, file);
      await p.score(id);
      return id;
    };
    type Row = { promote: boolean; rule: string; noise?: NoiseSummary };
    const unbudgeted = { heldoutBudget: { enabled: false }, alphaSpending: { enabled: false } };
    const arms = {
      on: {
        label: 'with the noise check (2σ as t, k = 3, clusters by source file)',
        settings: { ...unbudgeted, clusterBy: 'source' as const },
      },
      item: { label: 'the same, every item its own cluster', settings: { ...unbudgeted, clusterBy: 'item' as const } },
      off: { label: 'without (paired test and margin alone)', settings: { ...unbudgeted, noise: { enabled: false } } },
    };
    type Arm = keyof typeof arms;
    const out: Record<'honest' | 'null', Record<Arm, Row[]>> = {
      honest: { on: [], item: [], off: [] },
      null: { on: [], item: [], off: [] },
    };
    for (let s = 1; s <= seeds; s++) {
      const incumbent = await ckpt(`-inc-s${s}`, s, incSteps);
      const reruns = [];
      for (const j of [1, 2, 3]) reruns.push(await ckpt(`-rerun${j}-s${s}`, 3000 + 10 * s + j, incSteps));
      const candidates = { honest: await ckpt(`-hon-s${s}`, 1000 + s, honestSteps), null: await ckpt(`-null-s${s}`, 2000 + s, incSteps) };
      for (const kind of ['honest', 'null'] as const)
        for (const arm of Object.keys(arms) as Arm[]) {
          const tag = `-${kind}-${arm}-s${s}`;
          const { summary } = await p.gate('honest', tag, candidates[kind], incumbent, arms[arm].settings, reruns);
          const [row] = await dbh.db
            .select()
            .from(decisions)
            .where(eq(decisions.id, `gn-honest${tag}/outer/i1/gate`));
          out[kind][arm].push({
            promote: summary.promote,
            rule: summary.rule,
            noise: (row.figures as { noise?: NoiseSummary }).noise,
          });
        }
      if (s % 5 === 0) console.log(`  ${s} seeds (${((Date.now() - t0) / 1000).toFixed(0)} s, load ${loadAverage()})`);
    }
    const rate = (rows: Row[], promoted: boolean) => {
      const hits = rows.filter((r) => r.promote === promoted);
      const rules = [...new Set(hits.filter((r) => !r.promote).map((r) => r.rule))].map(
        (rule) => `${rule} ${hits.filter((r) => r.rule === rule).length}`,
      );
      return `${hits.length}/${rows.length}${rules.length ? ` (${rules.join(', ')})` : ''}`;
    };
    const avg = (rows: Row[], f: (n: NoiseSummary) => number) => mean(rows.flatMap((r) => (r.noise ? [f(r.noise)] : []))).toFixed(4);
    console.log(`\n| gate | false rejection (honest rejected) | false acceptance (null promoted) |\n| --- | ---: | ---: |`);
    for (const arm of Object.keys(arms) as Arm[])
      console.log(`| ${arms[arm].label} | ${rate(out.honest[arm], false)} | ${rate(out.null[arm], true)} |`);
    console.log(`\nmeans over seeds (noise figures recorded either way):`);
    console.log(
      `| candidate | clusters | Δ | σ_seed | σ_shift | σ_items | σ | df | multiple | Δ/σ |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |`,
    );
    for (const kind of ['honest', 'null'] as const)
      for (const arm of ['on', 'item'] as const) {
        const rows = out[kind][arm];
        const cells = [
          (n: NoiseSummary) => n.clusters ?? 0,
          (n: NoiseSummary) => n.delta,
          (n: NoiseSummary) => n.sigmaSeed,
          (n: NoiseSummary) => n.sigmaSeedShift ?? n.sigmaSeed,
          (n: NoiseSummary) => n.sigmaItems,
          (n: NoiseSummary) => n.sigma,
          (n: NoiseSummary) => n.df ?? 0,
          (n: NoiseSummary) => n.multiple ?? n.sigmas,
          (n: NoiseSummary) => (n.sigma > 0 ? n.delta / n.sigma : 0),
        ].map((f) => avg(rows, f));
        console.log(`| ${kind}${arm === 'item' ? ' (by item)' : ''} | ${cells.join(' | ')} |`);
      }
    console.log(`\n${((Date.now() - t0) / 1000).toFixed(0)} s in all; load at the end ${loadAverage()}`);
  } finally {
    await started.stop();
  }
}

runBench(main);
