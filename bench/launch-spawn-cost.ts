// What one local launch costs the worker's process, started by forking the worker (Node's spawn) or by the worker's
// spawn helper (backends/local/spawn-server.ts), from a process holding HEAP_MB of memory as a busy worker does (half
// in the JavaScript heap, half in buffers). ROUNDS rounds, the two ways interleaved; each launches N runs of
// `/bin/true` one after another through LocalBackend.launch (the launcher records its pid, runs, records its exit).
// Per launch: this process's CPU (user + system, page faults included), the longest event-loop stall, and the
// helper's own CPU (it counts for the machine).
// Run: node bin/run-ts.js bench/launch-spawn-cost.ts [N] [HEAP_MB] [ROUNDS]   (defaults 40, 600, 3)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { LocalBackend } from '../backends/local/local-backend';
import { SpawnServer, type SpawnRequest } from '../backends/local/spawn-server';
import { loadAverage } from './lib/load-average';
import { ticksOf } from './lib/process-cpu';
import { runBench } from './lib/run-bench';

/** The way before the helper: the worker forks itself for each launcher. */
const forkTheWorker = {
  spawn(req: SpawnRequest): Promise<number> {
    const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, detached: req.detached, stdio: 'ignore' });
    child.unref();
    return Promise.resolve(child.pid ?? -1);
  },
};

/** Holds `mb` MiB: half as small JavaScript objects, half as filled buffers. */
function ballast(mb: number): unknown[] {
  const keep: unknown[] = [];
  for (let i = 0; i < mb / 2; i++) keep.push(Buffer.alloc(1 << 20, i));
  for (let i = 0; i < mb / 2; i++) keep.push(Array.from({ length: 1 << 13 }, (_, j) => ({ j, s: `x${j}` })));
  return keep;
}

async function round(way: string, backend: LocalBackend, n: number, dir: string, helper?: SpawnServer): Promise<string> {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const helperTicks = () => (helper?.pid ? ticksOf(helper.pid) : 0);
  const h0 = helperTicks();
  const c0 = process.cpuUsage();
  delay.enable();
  for (let i = 0; i < n; i++) {
    const runDir = path.join(dir, `${way}-${i}`);
    await backend.launch({ runId: `bench/${way}/${i}`, runDir, argv: ['/bin/true'] });
  }
  delay.disable();
  const c = process.cpuUsage(c0);
  const helperMs = ((helperTicks() - h0) * 10) / n;
  const cpu = (c.user + c.system) / 1000 / n;
  const sys = c.system / 1000 / n;
  return `${way.padEnd(6)} worker ${cpu.toFixed(2)} ms/launch (system ${sys.toFixed(2)}), longest stall ${(delay.max / 1e6).toFixed(1)} ms, helper ${helperMs.toFixed(2)} ms/launch`;
}

runBench(async () => {
  const [n = 40, heapMb = 600, rounds = 3] = process.argv.slice(2).map(Number);
  const keep = ballast(heapMb);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-spawn-cost-'));
  const helper = new SpawnServer();
  const ways = { fork: new LocalBackend({ spawner: forkTheWorker }), helper: new LocalBackend({ spawner: helper }) };
  try {
    // One launch each first: the helper's start and the first-run costs are not what is measured.
    for (const [way, b] of Object.entries(ways))
      await b.launch({ runId: `bench/${way}/warm`, runDir: path.join(dir, `${way}-warm`), argv: ['/bin/true'] });
    const rss = Math.round(process.memoryUsage().rss / 2 ** 20);
    const helperRss = Math.round(Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${helper.pid}/status`, 'utf8'))?.[1]) / 1024);
    console.log(
      `${n} launches a round, ${rounds} rounds; this process ${rss} MB resident, the helper ${helperRss} MB; load ${loadAverage()}`,
    );
    for (let r = 0; r < rounds; r++) {
      console.log(await round('fork', ways.fork, n, path.join(dir, `r${r}`)));
      console.log(await round('helper', ways.helper, n, path.join(dir, `r${r}`), helper));
    }
    console.log(`load ${loadAverage()} (${keep.length} ballast blocks held)`);
  } finally {
    helper.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
