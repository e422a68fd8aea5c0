// What one file operation costs in CPU on the filesystem that holds FLYWHEEL_HOME, beside a RAM-backed one (/dev/shm),
// in one run: a served run's launch and end write about seventeen small files, four folders and four copies in the worker
// (docs/scale.md "the filesystem"), so on a filesystem where each costs hundreds of microseconds they are a large share
// of a no-op experiment's CPU. Per operation: the CPU of this process and the machine's busy CPU (the kernel's
// writeback threads included), over COUNT operations in a fresh folder, the folder removed after each kind.
// Run: node bin/run-ts.js bench/file-op-cost.ts [DIR] [COUNT]   (defaults: os.tmpdir(), 1500)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadAverage } from './lib/load-average';
import { machineTicks, TICK_MS } from './lib/process-cpu';
import { runBench } from './lib/run-bench';

const OPS: Array<[string, (dir: string, i: number) => void]> = [
  ['small file, kept', (d, i) => fs.writeFileSync(path.join(d, `f${i}`), '123\n')],
  [
    'small file, renamed in',
    (d, i) => {
      fs.writeFileSync(path.join(d, `t${i}`), '123\n');
      fs.renameSync(path.join(d, `t${i}`), path.join(d, `f${i}`));
    },
  ],
  [
    'small file, removed',
    (d, i) => {
      fs.writeFileSync(path.join(d, `f${i}`), '123\n');
      fs.unlinkSync(path.join(d, `f${i}`));
    },
  ],
  ['folder', (d, i) => fs.mkdirSync(path.join(d, `d${i}`))],
  ['copyFile (300 B)', (d, i) => fs.copyFileSync(path.join(d, 'source'), path.join(d, `c${i}`))],
];

function measure(root: string, count: number, op: (dir: string, i: number) => void): { self: number; machine: number } {
  const dir = fs.mkdtempSync(path.join(root, 'flywheel-file-op-'));
  try {
    fs.writeFileSync(path.join(dir, 'source'), 'x'.repeat(300));
    const m0 = machineTicks();
    const c0 = process.cpuUsage();
    for (let i = 0; i < count; i++) op(dir, i);
    const c = process.cpuUsage(c0);
    return { self: (c.user + c.system) / count, machine: ((machineTicks() - m0) * TICK_MS * 1000) / count };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const home = process.argv[2] ?? os.tmpdir();
  const count = Number(process.argv[3] ?? 1500);
  if (!fs.existsSync(home) || !Number.isInteger(count) || count <= 0) {
    console.error(
      `usage: bench/file-op-cost.ts [DIR] [COUNT]: an existing folder and a positive integer (got ${home}, ${process.argv[3]})`,
    );
    process.exit(2);
  }
  const roots = [home, ...(fs.existsSync('/dev/shm') ? ['/dev/shm'] : [])];
  console.log(`CPU per file operation (µs), ${count} each; ${roots.join(' beside ')}`);
  console.log(`${'operation'.padEnd(24)} ${roots.map((r) => `${r} self/machine`.padStart(28)).join('')}  load`);
  for (const [name, op] of OPS) {
    const cells = roots.map((r) => measure(r, count, op)).map((m) => `${m.self.toFixed(0)} / ${m.machine.toFixed(0)}`.padStart(28));
    console.log(`${name.padEnd(24)} ${cells.join('')}  ${loadAverage()}`);
  }
}

runBench(main);
