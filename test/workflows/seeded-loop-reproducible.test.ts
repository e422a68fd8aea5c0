// Same seed, same figures: two campaigns with one spec run their inner loops at the same time on the same workers
// (so their parallel runs finish in different orders), with the median pruner on. Every experiment gets the same
// params, the same status, the same public score and the same pruning verdict (step and median).
import { asc, eq } from 'drizzle-orm';
import { experiments } from '../../db/schema';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

let harness: LoopHarness;
afterAll(() => harness?.close());

test('two seeded inner loops give identical proposals, statuses, scores and pruning verdicts', async () => {
  harness = await loopHarness('seeded-repro');
  const workers = await harness.workers('t-repro');
  const spec = (name: string) =>
    fastBuiltinSpec(name, {
      innerLoop: {
        budget: { experiments: 6, parallelism: 2 },
        batchSize: 2,
        startupTrials: 2,
        seed: 5,
        pruning: { rule: 'median', warmupSteps: 40, minCompleted: 2 },
      },
    });
  const [a, b] = [uniqueName('repro-a'), uniqueName('repro-b')];
  const results = await Promise.all([a, b].map(async (c) => (await workers.startLoop(c, spec(c))).result()));
  const rows = async (c: string) =>
    (await harness.db.db.select().from(experiments).where(eq(experiments.campaignId, c)).orderBy(asc(experiments.index))).map((r) => ({
      index: r.index,
      proposer: r.proposer,
      params: r.params,
      status: r.status,
      publicScore: r.publicScore,
      error: r.error,
    }));
  const [ra, rb] = [await rows(a), await rows(b)];
  expect(ra).toHaveLength(7); // six experiments and the untrained baseline
  expect(rb).toEqual(ra);
  expect(results[1].heldout).toEqual(results[0].heldout);
  expect(results[1].best?.params).toEqual(results[0].best?.params);
}, 600_000);
