// A sampler and a pruner of a test's own, registered by name as a plugin would be, choose and stop the experiments
// of a real inner loop (dev server, PostgreSQL, the built-in trainer): every experiment carries the toy sampler's
// params and label, and the toy pruner's verdict stops the second batch with its own reason.
import { asc, eq } from 'drizzle-orm';
import { z } from 'zod';
import { registerPruner, unregisterPruner, type MetricPoint, type PeerCurve } from '../../core/pruning';
import { registerSampler, unregisterSampler, type SamplerContext } from '../../core/sampler';
import type { Params } from '../../core/spec';
import { experiments } from '../../db/schema';
import { loopHarness, type LoopHarness } from '../helpers/loop-harness';
import { fastBuiltinSpec, uniqueName } from '../helpers/specs';

/** The toy sampler walks this list: the campaign's n-th trial runs the n-th point. */
const WALK: Params[] = [
  { lr: 0.003, hidden: 32, context: 4, steps: 150 },
  { lr: 0.01, hidden: 48, context: 6, steps: 160 },
  { lr: 0.001, hidden: 16, context: 3, steps: 170 },
  { lr: 0.02, hidden: 64, context: 8, steps: 180 },
];

let harness: LoopHarness;

beforeAll(() => {
  registerSampler('walk', () => ({
    propose: (ctx: SamplerContext) => Array.from({ length: ctx.count }, (_, i) => WALK[(ctx.history.length + i) % WALK.length]),
    describe: (ctx: SamplerContext, i: number) => ({ proposer: 'walk', hypothesis: `walk point ${ctx.history.length + i + 1}` }),
  }));
  // Stops a run at its first point from `atStep` on, once any run of an earlier batch has finished: the first batch
  // runs to the end, the second is stopped.
  registerPruner<{ atStep: number }>(
    'after-peers',
    ({ options, metric }) => ({
      prune: (points: readonly MetricPoint[], peers: readonly PeerCurve[]) => {
        const p = peers.length > 0 ? points.find((x) => x.step >= options.atStep) : undefined;
        return (
          p && { step: p.step, value: p.value, reason: `${metric} ${p.value.toFixed(4)} with ${peers.length} finished peers (after-peers)` }
        );
      },
    }),
    z.strictObject({ atStep: z.number().int().min(0).default(20) }),
  );
});

afterAll(async () => {
  unregisterSampler('walk');
  unregisterPruner('after-peers');
  await harness?.close();
});

test("an inner loop with a registered sampler and pruner runs the sampler's params and stops runs by the pruner's verdict", async () => {
  harness = await loopHarness('sampler-plugin');
  const workers = await harness.workers('t-plugin');
  const campaignId = uniqueName('plugin');
  const spec = fastBuiltinSpec(campaignId, {
    innerLoop: {
      proposer: 'walk',
      budget: { experiments: 4, parallelism: 2 },
      batchSize: 2,
      pruning: { rule: 'after-peers', warmupSteps: 0, minCompleted: 1, options: { atStep: 40 } },
    },
  });
  const result = await (await workers.startLoop(campaignId, spec)).result();
  const rows = await harness.db.db.select().from(experiments).where(eq(experiments.campaignId, campaignId)).orderBy(asc(experiments.index));
  const trials = rows.filter((r) => r.proposer !== 'baseline');
  expect(trials.map((r) => r.params)).toEqual(WALK);
  expect(trials.map((r) => [r.proposer, r.hypothesis])).toEqual(WALK.map((_, i) => ['walk', `walk point ${i + 1}`]));
  expect(trials.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'pruned', 'pruned']);
  for (const r of trials.slice(2))
    expect(r.error).toMatch(/^pruned at step 40: trainer-reported loss \d+\.\d{4} with [12] finished peers \(after-peers\)$/);
  expect(WALK.slice(0, 2)).toContainEqual(result.best?.params);
}, 300_000);
