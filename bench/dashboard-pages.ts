// Dashboard page time at scale: a campaign with 10,000 experiments and 1,000,000 metric points (seeded straight into
// PostgreSQL with generate_series), each main page loaded 50 times over HTTP; median and p95 per page, and the ratio
// of the slowest page to the campaign list. Server and client share this process.
// Run: node bin/run-ts.js bench/dashboard-pages.ts [EXPERIMENTS] [POINTS_PER_RUN] [LOADS]   (DATABASE_URL: use that server)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startDashboard } from '../server/dashboard/server';
import { openDb } from '../db/client';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedPg } from '../db/embedded-server';
import { applyMigrations } from '../db/migrate';
import { DASHBOARD_LOOP as LOOP, seedDashboard as seed } from './lib/seed-dashboard';
import { freePort } from '../test/helpers/ports';
import { runBench } from './lib/run-bench';

function quantile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const nExperiments = Number(process.argv[2] ?? 10_000);
  const nPoints = Number(process.argv[3] ?? 100);
  const loads = Number(process.argv[4] ?? 50);
  let pg: EmbeddedPg | undefined;
  let home: string | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-bench-dashboard-'));
    fs.chmodSync(home, 0o755); // the embedded PostgreSQL runs as the `postgres` user when we are root
    pg = await startEmbeddedPostgres({ dataDir: path.join(home, 'pg'), port: await freePort() });
    serverUrl = pg.adminUrl;
  }
  const url = await ensureDatabase(serverUrl, `flywheel_bench_dashboard_${Date.now().toString(36)}`);
  await applyMigrations(url);
  const db = openDb(url, { max: 10 });
  const server = await startDashboard({ db: db.db, port: 0 });
  try {
    const t0 = performance.now();
    await seed(db, nExperiments, nPoints);
    const seeded = (
      await db.pool.query('SELECT (SELECT count(*) FROM experiments)::int AS e, (SELECT count(*) FROM metric_points)::int AS m')
    ).rows[0];
    console.log(`seeded ${seeded.e} experiments and ${seeded.m} metric points in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const lastPage = Math.max(0, Math.ceil(nExperiments / 50) - 1);
    const pages: Array<[string, string]> = [
      ['campaign list', '/'],
      ['campaign', '/campaigns/bench'],
      ['inner loop, page 1', `/loops/${encodeURIComponent(LOOP)}`],
      [`inner loop, page ${lastPage + 1}`, `/loops/${encodeURIComponent(LOOP)}?page=${lastPage}`],
      ['live curves (svg)', `/loops/${encodeURIComponent(LOOP)}/curves.svg`],
      // The loop page's charts, fetched by the browser after the page: curves, history, parallel coordinates, importance.
      ['loop charts (json)', `/loops/${encodeURIComponent(LOOP)}/charts.json`],
      ['experiment', `/experiments/${encodeURIComponent(`${LOOP}/e17`)}`],
    ];
    console.log(`\ndashboard page time, ${loads} sequential loads each after 3 warm-up loads (${os.cpus().length} CPUs)`);
    console.log('page                       median ms    p95 ms   KiB');
    const medians: number[] = [];
    for (const [name, p] of pages) {
      const times: number[] = [];
      let size = 0;
      for (let i = 0; i < loads + 3; i++) {
        const s = performance.now();
        const res = await fetch(server.url + p);
        const body = await res.text();
        if (res.status !== 200) throw new Error(`${p}: HTTP ${res.status}`);
        if (i >= 3) times.push(performance.now() - s);
        size = body.length;
      }
      times.sort((a, b) => a - b);
      medians.push(quantile(times, 0.5));
      console.log(
        `${name.padEnd(26)} ${quantile(times, 0.5).toFixed(1).padStart(9)} ${quantile(times, 0.95).toFixed(1).padStart(9)} ${(size / 1024).toFixed(0).padStart(5)}`,
      );
    }
    console.log(`ratio slowest/fastest median: ${(Math.max(...medians) / Math.min(...medians)).toFixed(1)}x`);
  } finally {
    await server.close();
    await db.close();
    await pg?.stop();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  }
}

runBench(main);
