// The short, seeded version of the fault suite (the long one: `npm run test:faults`): the same campaign without
// faults and under a schedule that SIGKILLs a worker and a trainer and kills Temporal (restarted on its SQLite file),
// with concurrent feedback writes; every invariant holds and the decisions match, or a recorded retry explains them.
import { scratchDir } from '../helpers/env';
import { faultSchedule } from '../faults/fault-schedule';
import { runFaultCampaign } from '../faults/fault-run';
import { faultFigures } from '../faults/fault-report';
import { unexplainedDifferences } from '../faults/invariants';

const SEED = Number(process.env.FLYWHEEL_FAULT_SEED ?? 4242);

it(`keeps every invariant under a seeded fault schedule (seed ${SEED})`, async () => {
  const clean = await runFaultCampaign({ seed: SEED, schedule: [], home: scratchDir('faults-clean'), experiments: 4 });
  expect(clean.violations).toEqual([]);
  // Seeded moments; each kind once, the trainer first so that one is still running when it lands.
  const kinds = ['trainer', 'worker', 'temporal'] as const;
  const schedule = faultSchedule(SEED, { count: 3, kinds, windowMs: 9_000, minGapMs: 2_000 }).map((f, i) => ({ ...f, kind: kinds[i] }));
  const faulted = await runFaultCampaign({ seed: SEED, schedule, home: scratchDir('faults'), experiments: 4, feedbackEvents: 60 });
  console.log([`seed ${SEED}`, ...faultFigures([faulted])].join('\n'));
  expect(faulted.faults.filter((f) => !f.skipped).map((f) => f.kind).sort()).toEqual(['temporal', 'trainer', 'worker']);
  expect([...faulted.violations, ...unexplainedDifferences(faulted.facts, clean.facts)]).toEqual([]);
}, 600_000);
