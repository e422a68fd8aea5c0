// How long `flywheel up` takes to bring the whole stack up, cold (empty FLYWHEEL_HOME) and warm (existing
// home), and how much memory the stack holds; plus the two choices behind those numbers: the SQLite pragmas
// of the dev server and the cached workflow bundle. Run: node bin/run-ts.js bench/stack-startup.ts [--reps N]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { startTemporalDevServer } from '../stack/temporal-dev-server';
import { cachedWorkflowBundle } from '../workers/workflow-bundle';
import { freePort } from '../test/helpers/ports';
import { spawnUp, stackEnv } from '../test/stack/up-process';
import { runBench } from './lib/run-bench';

const REPS = Number(process.argv[process.argv.indexOf('--reps') + 1]) || 3;

/** mkdtemp makes 0700 folders, which the embedded PostgreSQL (run as user postgres under root) cannot enter. */
function tempHome(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `fw-bench-${label}-`));
  fs.chmodSync(dir, 0o755);
  return dir;
}

/** Steady-state RSS (MB) per component, from the last run: where the memory goes. */
let breakdown: Record<string, number> = {};

interface Run {
  mode: string;
  temporal: number;
  postgres: number;
  workers: number;
  up: number;
  stop: number;
  peakRssMb: number;
}

/** RSS of `root` and (by default) all its descendants, from /proc (the workers and the dev server are direct children). */
function treeRssKb(root: number, descendants = true): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const d of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(f[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
      rss.set(Number(d), Number(f[21]) * 4);
    } catch {
      /* exited meanwhile */
    }
  }
  let total = 0;
  for (const stack = [root]; stack.length;) {
    const p = stack.pop()!;
    total += rss.get(p) ?? 0;
    if (descendants) stack.push(...(children.get(p) ?? []));
  }
  return total;
}

async function timeUp(mode: string, home: string): Promise<Run> {
  const t0 = Date.now();
  const up = spawnUp(home, await stackEnv(home));
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, treeRssKb(up.child.pid!))), 100);
  const at = async (re: RegExp): Promise<number> => (await up.waitFor(re, { timeoutMs: 180_000 }), (Date.now() - t0) / 1000);
  try {
    const [temporal, postgres] = await Promise.all([at(/^✓ temporal/), at(/^✓ postgres/)]);
    const workers = Math.max(...(await Promise.all(['orchestration', 'training', 'eval'].map((f) => at(new RegExp(`^✓ worker ${f}`))))));
    const upAt = await at(/^flywheel is up/);
    await new Promise((r) => setTimeout(r, 2_000)); // let the workers settle before reading the peak
    const st = up.state()!;
    const parts: Array<[string, number | undefined]> = [
      ['flywheel up', st.pid],
      ['temporal', st.temporal.pid],
      ['postgres (all backends)', st.postgres.pid],
      ...Object.entries(st.workers).map(([f, w]): [string, number] => [`worker ${f}`, w!.pid]),
    ];
    breakdown = Object.fromEntries(
      parts.map(([name, pid]) => [name, Math.round((pid ? treeRssKb(pid, name !== 'flywheel up') : 0) / 1024)]),
    );
    const s0 = Date.now();
    up.child.kill('SIGINT');
    await up.exited;
    return { mode, temporal, postgres, workers, up: upAt, stop: (Date.now() - s0) / 1000, peakRssMb: peak / 1024 };
  } catch (e) {
    up.killAll();
    throw e;
  } finally {
    clearInterval(sampler);
  }
}

/** Workflow starts per second against a fresh dev server with the given pragmas (history writes hit SQLite). */
async function startRate(pragmas: string[], n = 300): Promise<number> {
  const home = tempHome('sqlite');
  const server = await startTemporalDevServer({ home, port: await freePort(), uiPort: await freePort(), sqlitePragmas: pragmas });
  try {
    const client = new Client({ connection: server.connection });
    const t0 = Date.now();
    for (let i = 0; i < n; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, (_, j) => client.workflow.start('benchNoop', { taskQueue: 'bench-unpolled', workflowId: `w-${i + j}` })),
      );
    }
    return n / ((Date.now() - t0) / 1000);
  } finally {
    await server.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const runs: Run[] = [];
  const warmHome = tempHome('warm');
  // The first cold run fills the home the warm runs reuse.
  for (let i = 0; i < REPS; i++) {
    const cold = i === 0 ? warmHome : tempHome('cold');
    runs.push(await timeUp('cold', cold));
    if (cold !== warmHome) fs.rmSync(cold, { recursive: true, force: true });
  }
  for (let i = 0; i < REPS; i++) runs.push(await timeUp('warm', warmHome));
  const steady = breakdown;
  // Warm, but the workflow bundle must be rebuilt (as after editing a workflow): the cache's share of start-up.
  for (let i = 0; i < REPS; i++) {
    fs.rmSync(path.join(warmHome, 'cache'), { recursive: true, force: true });
    runs.push(await timeUp('warm, no bundle cache', warmHome));
  }
  fs.rmSync(warmHome, { recursive: true, force: true });

  console.log(`\nflywheel up start-up (seconds from spawn; ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)})`);
  console.table(runs.map((r) => ({ ...r, peakRssMb: Math.round(r.peakRssMb) })));
  const median = (mode: string): number => {
    const ups = runs
      .filter((r) => r.mode === mode)
      .map((r) => r.up)
      .sort((a, b) => a - b);
    return ups[Math.floor(ups.length / 2)];
  };
  console.log(
    `median to "flywheel is up": cold ${median('cold').toFixed(1)} s, warm ${median('warm').toFixed(1)} s (warm/cold ${(median('warm') / median('cold')).toFixed(2)})`,
  );
  console.log(
    `warm without the bundle cache: ${median('warm, no bundle cache').toFixed(1)} s (${(median('warm, no bundle cache') / median('warm')).toFixed(2)}x warm)`,
  );
  console.log('\nsteady-state RSS by component (MB, last warm run)');
  console.table(steady);

  const cacheDir = tempHome('bundle');
  const built = await cachedWorkflowBundle({ cacheDir });
  const reused = await cachedWorkflowBundle({ cacheDir });
  fs.rmSync(cacheDir, { recursive: true, force: true });
  console.log(
    `\nworkflow bundle: built in ${built.ms} ms, reused from cache in ${reused.ms} ms (${(built.ms / Math.max(reused.ms, 1)).toFixed(0)}x)`,
  );

  const rates: Record<string, number> = {};
  for (const [label, pragmas] of [
    ['sqlite defaults', []],
    ['wal + synchronous=normal', ['journal_mode=wal', 'synchronous=normal']],
  ] as const) {
    rates[label] = await startRate([...pragmas]);
  }
  console.log('\nworkflow starts per second against the dev server (300 starts, 10 at a time)');
  console.table(Object.entries(rates).map(([pragmas, perSecond]) => ({ pragmas, perSecond: Math.round(perSecond) })));
  console.log(`wal/defaults: ${(rates['wal + synchronous=normal'] / rates['sqlite defaults']).toFixed(2)}`);
}

runBench(main);
