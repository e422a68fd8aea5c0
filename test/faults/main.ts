// `npm run test:faults [-- --runs N] [--seed S] [--faults K]`: each run plays the demo campaign twice for its seed,
// without faults and under a seeded schedule (worker and trainer SIGKILLs, Temporal and PostgreSQL killed and
// restarted on the same files, concurrent feedback writes), checks the invariants, and prints the figures.
// Exit 1 on any violation; replay one run with its printed seed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FAULT_KINDS, faultSchedule } from './fault-schedule';
import { runFaultCampaign, type FaultRunReport } from './fault-run';
import { faultFigures } from './fault-report';
import { unexplainedDifferences } from './invariants';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
}

async function main(): Promise<void> {
  const runs = arg('runs', 3);
  const first = arg('seed', Date.now() % 100000);
  const faults = arg('faults', 6);
  const reports: FaultRunReport[] = [];
  for (let i = 0; i < runs; i++) {
    const seed = first + i;
    console.log(`seed ${seed}`);
    const home = (label: string): string => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `flywheel-faults-${seed}-${label}-`));
      fs.chmodSync(dir, 0o755); // the embedded PostgreSQL runs as `postgres` when we are root
      return dir;
    };
    const clean = await runFaultCampaign({ seed, schedule: [], home: home('clean') });
    const schedule = faultSchedule(seed, { count: faults, kinds: FAULT_KINDS, windowMs: 40_000, minGapMs: 3_000 });
    console.log(`  schedule: ${schedule.map((f) => `${f.kind}@${(f.atMs / 1000).toFixed(1)}s`).join(' ')}`);
    const r = await runFaultCampaign({ seed, schedule, home: home('faults'), feedbackEvents: 300, log: console.log });
    r.violations.push(...unexplainedDifferences(r.facts, clean.facts), ...clean.violations.map((v) => `(fault-free run) ${v}`));
    reports.push(r);
  }
  for (const line of faultFigures(reports)) console.log(line);
  if (reports.some((r) => r.violations.length)) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
