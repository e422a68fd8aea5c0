// `npm run test:faults [-- --runs N] [--seed S] [--faults K] [--loop inner|outer] [--backend local|slurm] [--kinds a,b]
// [--inline] [--warm-train]`:
// each run plays the campaign twice for its seed, without faults and under a seeded schedule (worker and trainer
// SIGKILLs, Temporal killed and restarted on its SQLite file, Temporal killed the same way the moment a prune is in
// flight, PostgreSQL killed and restarted on its data folder, the network to PostgreSQL cut, concurrent feedback
// writes), checks the invariants, and prints the figures. `--kinds` draws from those kinds only (default: all);
// `--inline` runs the experiments as coroutines of their loop's workflow (innerLoop.experimentWorkflows: inline);
// `--warm-train` serves the runs from warm trainers (trainer.warmTrain; a trainer kill may hit a server between runs).
// Exit 1 on any violation; replay one run with its printed seed (and the same --loop, --backend, --faults, --kinds).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BackendKind, LoopKind } from './fault-campaign';
import { FAULT_KINDS, faultSchedule, type FaultKind } from './fault-schedule';
import { runFaultCampaign, type FaultRunReport } from './fault-run';
import { faultFigures } from './fault-report';
import { unexplainedDifferences } from './run-checks';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

async function main(): Promise<void> {
  const runs = Number(arg('runs', '3'));
  const first = Number(arg('seed', String(Date.now() % 100000)));
  const faults = Number(arg('faults', '6'));
  const loop = arg('loop', 'outer') as LoopKind;
  const backend = arg('backend', 'local') as BackendKind;
  const kinds = arg('kinds', FAULT_KINDS.join(',')).split(',') as FaultKind[];
  const inline = process.argv.includes('--inline');
  const warmTrain = process.argv.includes('--warm-train');
  const badKind = kinds.find((k) => !(FAULT_KINDS as readonly string[]).includes(k));
  if (
    !['inner', 'outer'].includes(loop) ||
    !['local', 'slurm'].includes(backend) ||
    !(runs > 0) ||
    !(faults >= 0) ||
    !Number.isInteger(first) ||
    badKind !== undefined
  ) {
    const which = badKind !== undefined ? `unknown fault kind '${badKind}' (kinds: ${FAULT_KINDS.join(', ')})\n` : '';
    throw new Error(
      `${which}usage: npm run test:faults -- [--runs N] [--seed S] [--faults K] [--loop inner|outer] [--backend local|slurm] [--kinds a,b] [--inline] [--warm-train]`,
    );
  }
  const only = `${kinds.length < FAULT_KINDS.length ? ` --kinds ${kinds.join(',')}` : ''}${inline ? ' --inline' : ''}${warmTrain ? ' --warm-train' : ''}`;
  const reports: FaultRunReport[] = [];
  for (let i = 0; i < runs; i++) {
    const seed = first + i;
    console.log(`seed ${seed} (--loop ${loop} --backend ${backend} --faults ${faults}${only})`);
    const home = (label: string): string => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `flywheel-faults-${seed}-${label}-`));
      fs.chmodSync(dir, 0o755); // the embedded PostgreSQL runs as `postgres` when we are root
      return dir;
    };
    const clean = await runFaultCampaign({ seed, schedule: [], home: home('clean'), loop, backend, inline, warmTrain });
    // Faults land while the loop runs: within the first 80% of the fault-free run's time.
    const schedule = faultSchedule(seed, {
      count: faults,
      kinds,
      windowMs: Math.max(0.8 * clean.durationMs, faults * 3_000),
      minGapMs: 1_500,
    });
    console.log(`  fault-free run: ${(clean.durationMs / 1000).toFixed(1)} s`);
    console.log(`  schedule: ${schedule.map((f) => `${f.kind}@${(f.atMs / 1000).toFixed(1)}s`).join(' ')}`);
    const r = await runFaultCampaign({
      seed,
      schedule,
      home: home('faults'),
      loop,
      backend,
      inline,
      warmTrain,
      feedbackEvents: 300,
      log: console.log,
    });
    r.violations.push(...unexplainedDifferences(r.facts, clean.facts), ...clean.violations.map((v) => `(fault-free run) ${v}`));
    reports.push(r);
  }
  for (const line of faultFigures(reports)) console.log(line);
  if (reports.some((r) => r.violations.length)) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
