// The short, seeded versions of the fault suite (the long one: `npm run test:faults`). The outer loop (two
// iterations, the inner loops on the built-in trainer) without faults and under a schedule that SIGKILLs a trainer
// and a worker, kills PostgreSQL (restarted on its data folder), cuts the network to it and kills Temporal
// (restarted on its SQLite file), with concurrent feedback writes; the inner loop with its experiments inline
// (coroutines of the loop's workflow) under trainer, worker and Temporal faults, and again with its runs served by warm
// trainers (trainer.warmTrain); and the inner loop on the real Slurm backend under trainer, worker and network faults. Every invariant holds and the final state matches the fault-free run's, or a
// recorded retry explains the difference.
import { scratchDir } from '../helpers/env';
import { testIf } from '../helpers/requires';
import type { BackendKind, LoopKind } from '../faults/fault-campaign';
import { faultSchedule, type FaultKind } from '../faults/fault-schedule';
import { runFaultCampaign } from '../faults/fault-run';
import { faultFigures } from '../faults/fault-report';
import { unexplainedDifferences } from '../faults/run-checks';
import { runAlone } from '../setup/file-slots';

// Its faults land at moments timed on its own fault-free run: no other test file runs beside it (jest runs two).
runAlone();

const SEED = Number(process.env.FLYWHEEL_FAULT_SEED ?? 4242);

/** How the inner loops run: experiments inline (innerLoop.experimentWorkflows), runs on warm trainers (trainer.warmTrain). */
interface Shape {
  inline?: boolean;
  warmTrain?: boolean;
}

async function faultedMatchesClean(loop: LoopKind, backend: BackendKind, kinds: FaultKind[], shape: Shape = {}): Promise<void> {
  const clean = await runFaultCampaign({ seed: SEED, schedule: [], home: scratchDir(`faults-${loop}-clean`), loop, backend, ...shape });
  expect(clean.violations).toEqual([]);
  // Seeded moments within the first 70% of the fault-free run; each kind once, in the order given (the trainer
  // first, so that one is still running when it lands).
  const window = Math.max(0.7 * clean.durationMs, kinds.length * 2_000);
  const schedule = faultSchedule(SEED, { count: kinds.length, kinds, windowMs: window, minGapMs: 2_000 }).map((f, i) => ({
    ...f,
    kind: kinds[i],
  }));
  const faulted = await runFaultCampaign({
    seed: SEED,
    schedule,
    home: scratchDir(`faults-${loop}`),
    loop,
    backend,
    ...shape,
    feedbackEvents: 60,
  });
  console.log(
    [
      `seed ${SEED}, ${loop} loop${shape.inline ? ' (experiments inline)' : ''}${shape.warmTrain ? ' (warm trainers)' : ''} on ${backend}; fault-free ${(clean.durationMs / 1000).toFixed(1)} s`,
      ...faultFigures([faulted]),
    ].join('\n'),
  );
  expect(
    faulted.faults
      .filter((f) => !f.skipped)
      .map((f) => f.kind)
      .sort(),
  ).toEqual([...kinds].sort());
  expect([...faulted.violations, ...unexplainedDifferences(faulted.facts, clean.facts)]).toEqual([]);
}

it(`outer loop: every invariant holds under trainer, worker, PostgreSQL, network and Temporal faults (seed ${SEED})`, async () => {
  await faultedMatchesClean('outer', 'local', ['trainer', 'worker', 'postgres', 'network', 'temporal']);
}, 900_000);

// Experiments as coroutines of the loop's workflow: a killed worker or Temporal replays the loop with its running
// experiments inside it, and a killed trainer is retried by the loop itself; nothing launched twice or lost.
it(`inner loop, experiments inline: every invariant holds under trainer, worker and Temporal faults (seed ${SEED})`, async () => {
  await faultedMatchesClean('inner', 'local', ['trainer', 'worker', 'temporal'], { inline: true });
}, 900_000);

// Runs served by warm trainers: a killed trainer (a server) fails the run it served, a killed worker takes its servers
// with it and its runs are lost (their outputs so far copied out) and retried; nothing launched twice or lost.
it(`inner loop, warm trainers: every invariant holds under trainer, worker and Temporal faults (seed ${SEED})`, async () => {
  await faultedMatchesClean('inner', 'local', ['trainer', 'worker', 'temporal'], { inline: true, warmTrain: true });
}, 900_000);

testIf('slurm')(
  `inner loop on Slurm: every invariant holds under trainer, worker and network faults, and no Slurm job is left (seed ${SEED})`,
  async () => {
    await faultedMatchesClean('inner', 'slurm', ['trainer', 'worker', 'network']);
  },
  900_000,
);
