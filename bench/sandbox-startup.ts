// The trainer sandbox's start-up cost per launch: the same program started N times (default 50) through the
// isolation Flywheel uses for `train` and `predict` (bubblewrap, activities/training/trainer-isolation.ts) and
// without it (`trainer.unsandboxed`: `env -i` with the same environment allow-list), interleaved so both see the
// same machine load. Programs: /bin/true (the sandbox's own cost), `node -e 0` and `python3 -c pass` (a trainer's
// interpreter start). Prints median and p95 per mode and the difference and ratio of the medians.
//   node bin/run-ts.js bench/sandbox-startup.ts [N]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { probeSandbox } from '../backends/sandbox/bubblewrap';
import { isolatedEntry, trainerSetupOf } from '../activities/training/trainer-isolation';
import { parseSpec } from '../tasks/task-spec';
import { runBench } from './lib/run-bench';

const N = Number(process.argv[2] ?? 50);

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

function timeOnce(argv: string[], cwd: string): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, env: {}, stdio: 'ignore' });
  if (r.status !== 0) throw new Error(`${argv.slice(-3).join(' ')} exited ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

function main(): void {
  const probe = probeSandbox();
  if (!probe.ok) {
    console.log(`sandbox-startup: no sandbox on this host (${probe.reason}); bash .ci/install-bubblewrap.sh`);
    process.exit(2);
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-bench-'));
  const runDir = path.join(home, 'runs', 'r1');
  fs.mkdirSync(runDir, { recursive: true });
  const [load1] = os.loadavg();
  console.log(`sandbox start-up per launch, ${N} launches per mode, interleaved; load average ${load1.toFixed(2)}; ${probe.bwrap}`);
  console.log('program'.padEnd(20) + 'unsandboxed med/p95 ms'.padEnd(26) + 'sandboxed med/p95 ms'.padEnd(24) + 'cost ms   ratio');
  try {
    for (const [label, command] of [
      ['/bin/true', ['/bin/true']],
      ['node -e 0', [process.execPath, '-e', '0']],
      ['python3 -c pass', ['python3', '-c', 'pass']],
    ] as const) {
      // The entry point's own argument ('train') is harmless to these programs: they ignore it. Each mode's command
      // is built once; only the launch is timed.
      const cmds = [false, true].map((unsandboxed) => {
        const spec = parseSpec({
          name: 'sandbox-bench',
          searchSpace: { x: { type: 'categorical', choices: [1] } },
          trainer: { command: [...command], unsandboxed },
        });
        return isolatedEntry(trainerSetupOf(spec, home), 'train', [], { cwd: runDir, data: [], readWrite: [runDir] });
      });
      for (const cmd of cmds) timeOnce(cmd.argv, runDir); // warm the page cache
      const times: Record<'none' | 'bubblewrap', number[]> = { none: [], bubblewrap: [] };
      for (let i = 0; i < N; i++) for (const cmd of cmds) times[cmd.sandbox].push(timeOnce(cmd.argv, runDir));
      const [a, b] = [times.none, times.bubblewrap];
      const ma = quantile(a, 0.5);
      const mb = quantile(b, 0.5);
      console.log(
        label.padEnd(20) +
          `${ma.toFixed(1)} / ${quantile(a, 0.95).toFixed(1)}`.padEnd(26) +
          `${mb.toFixed(1)} / ${quantile(b, 0.95).toFixed(1)}`.padEnd(24) +
          `${(mb - ma).toFixed(1)}`.padEnd(10) +
          `${(mb / ma).toFixed(2)}x`,
      );
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

runBench(main);
