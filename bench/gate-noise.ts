// The gate's error rates over seeds, with its noise check and, beside it in the same run, without (the paired test
// and the margin alone): false rejection (an honest candidate, the same small model trained longer, rejected) and
// false acceptance (a "null" candidate, the incumbent's own recipe from another seed, promoted). Each seed trains
// its own incumbent, honest and null candidates and k = 3 seed reruns of the incumbent's recipe (real charlm runs
// on the built-in task's data), scores them with the real scoreCheckpoint and gates with the real evaluateGate.
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

async function main(): Promise<void> {
  const [seeds, incSteps, honestSteps] = [20, 100, 300].map((d, i) => Number(process.argv[2 + i] ?? d));
  console.log(
    `gate noise: ${seeds} seeds, incumbent and null ${incSteps} steps, honest ${honestSteps} steps, k = 3 reruns; ${os.cpus().length} cores, load ${loadAverage()}`,
  );
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-bench-gate-noise-'));
  fs.chmodSync(home, 0o755);
  const pg = await startEmbeddedPostgres({ dataDir: path.join(home, 'pg'), port: await freePort() });
  const url = await ensureDatabase(pg.adminUrl, 'bench');
  await applyMigrations(url);
  const dbh = openDb(url, { max: 4 });
  const t0 = Date.now();
  try {
    const p = await plantedCheats(dbh.db, home, 'gn');
    const ckpt = async (tag: string, seed: number, steps: number) => {
      const file = await trainCheckpoint({ dir: home, id: `${tag}/step-${steps}`, text: p.trainText, seed, steps });
      const id = await p.candidate('honest', tag, file);
      await p.score(id);
      return id;
    };
    type Row = { promote: boolean; rule: string; noise?: NoiseSummary };
    const out: Record<'honest' | 'null', { on: Row[]; off: Row[] }> = { honest: { on: [], off: [] }, null: { on: [], off: [] } };
    for (let s = 1; s <= seeds; s++) {
      const incumbent = await ckpt(`-inc-s${s}`, s, incSteps);
      const reruns = [];
      for (const j of [1, 2, 3]) reruns.push(await ckpt(`-rerun${j}-s${s}`, 3000 + 10 * s + j, incSteps));
      const candidates = { honest: await ckpt(`-hon-s${s}`, 1000 + s, honestSteps), null: await ckpt(`-null-s${s}`, 2000 + s, incSteps) };
      for (const kind of ['honest', 'null'] as const)
        for (const on of [true, false]) {
          const tag = `-${kind}-${on ? 'on' : 'off'}-s${s}`;
          const { summary } = await p.gate('honest', tag, candidates[kind], incumbent, on ? {} : { noise: { enabled: false } }, reruns);
          const [row] = await dbh.db
            .select()
            .from(decisions)
            .where(eq(decisions.id, `gn-honest${tag}/outer/i1/gate`));
          out[kind][on ? 'on' : 'off'].push({
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
    for (const on of ['on', 'off'] as const)
      console.log(
        `| ${on === 'on' ? 'with the noise check (2σ, k = 3)' : 'without (paired test and margin alone)'} | ${rate(out.honest[on], false)} | ${rate(out.null[on], true)} |`,
      );
    console.log(`\nmeans over seeds (noise figures recorded either way):`);
    console.log(`| candidate | Δ | σ_seed | σ_items | σ | Δ/σ |\n| --- | ---: | ---: | ---: | ---: | ---: |`);
    for (const kind of ['honest', 'null'] as const) {
      const rows = out[kind].on;
      console.log(
        `| ${kind} | ${avg(rows, (n) => n.delta)} | ${avg(rows, (n) => n.sigmaSeed)} | ${avg(rows, (n) => n.sigmaItems)} | ${avg(rows, (n) => n.sigma)} | ${avg(rows, (n) => (n.sigma > 0 ? n.delta / n.sigma : 0))} |`,
      );
    }
    console.log(`\n${((Date.now() - t0) / 1000).toFixed(0)} s in all; load at the end ${loadAverage()}`);
  } finally {
    await dbh.close();
    await pg.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
