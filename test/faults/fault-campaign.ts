// The campaign a fault run plays: the inner loop alone on the fixture trainer (short, every experiment a real
// choice), or the outer loop (critiques of seeded feedback → dataset version → inner loop on the built-in trainer →
// gate → decision) for two iterations; on the local backend or the real Slurm one. Both prune weak runs of later
// batches by the median rule, deterministically per seed, so the `temporal-prune` fault has prunes to hit.
import fs from 'node:fs';
import path from 'node:path';
import { storeFeedback } from '../../services/feedback-store';
import type { CampaignSpecInput } from '../../core/spec';
import type { Db } from '../../db/client';
import { runCli } from '../helpers/cli';
import { fastBuiltinSpec, fixtureSpec } from '../helpers/specs';

export type LoopKind = 'inner' | 'outer';
export type BackendKind = 'local' | 'slurm';

export interface CampaignOptions {
  loop: LoopKind;
  backend: BackendKind;
  seed: number;
  /** Experiments per inner loop. */
  experiments: number;
  /** innerLoop.experimentWorkflows: experiments as coroutines of the loop's workflow. @default children */
  inline?: boolean;
  /** trainer.warmTrain: runs served by warm trainers (a killed worker loses its runs; the gate's reruns stay one-shot). @default false */
  warmTrain?: boolean;
}

export interface StartedCampaign {
  campaignId: string;
  /** The workflow to wait for: the inner loop, or the outer loop (its continue-as-new chain). */
  workflowId: string;
  /** Outer iterations the run asks for (0 for an inner-loop run). */
  iterations: number;
}

export const OUTER_ITERATIONS = 2;

/**
 * Experiments per inner loop when the run does not say: three batches of two for the inner-loop campaign, so the
 * median rule has earlier batches to prune against twice; two batches per iteration for the outer loop.
 */
export const DEFAULT_EXPERIMENTS: Record<LoopKind, number> = { inner: 6, outer: 4 };

export async function startCampaign(env: NodeJS.ProcessEnv, home: string, db: Db, o: CampaignOptions): Promise<StartedCampaign> {
  const campaignId = `faults-${o.loop}-${o.backend}${o.inline ? '-inline' : ''}${o.warmTrain ? '-warm' : ''}-s${o.seed}`;
  const warm = o.warmTrain ? { warmTrain: true } : {};
  const shape = o.inline ? { experimentWorkflows: 'inline' as const } : {};
  const backend = o.backend === 'slurm' ? { backend: { kind: 'slurm' } } : {};
  const specFile = path.join(home, 'spec.json');
  if (o.loop === 'inner') {
    const workflowId = `${campaignId}/inner/1`;
    const n = o.experiments;
    // The median rule prunes a run of a later batch whose offset is worse than the earlier batches' median (from step
    // 3: a point every 0.5 s), so the loop has prunes for the `temporal-prune` fault to hit; deterministic per seed.
    const pruning = { rule: 'median', warmupSteps: 3, minCompleted: 1, metric: 'loss' };
    const spec = fixtureSpec(
      campaignId,
      { steps: 12, sleepMs: 6000 },
      {
        budget: { experiments: n, parallelism: 2 },
        batchSize: 2,
        maxTrainingAttempts: 3,
        seed: o.seed,
        startupTrials: n,
        pruning,
        ...shape,
      },
    );
    // A real choice for the sampler: the seed decides the proposals, the offset their scores.
    spec.searchSpace = { ...spec.searchSpace, offset: { type: 'categorical', choices: [0, 0.5, 1, 1.5] } } as typeof spec.searchSpace;
    // Public splits through the eval worker's warm predict server, which a worker fault kills with its worker.
    spec.trainer = { ...spec.trainer, warmPredict: true, ...warm };
    fs.writeFileSync(specFile, JSON.stringify({ ...spec, ...backend }));
    const r = await runCli(env, ['run', specFile, '--id', workflowId, '--detach'], 120_000);
    if (r.status !== 0) throw new Error(`flywheel run failed: ${r.stderr.trim()}`);
    return { campaignId, workflowId, iterations: 0 };
  }
  // The median rule here too (from step 200 of 1200–2000): each iteration's second batch has prunes to hit.
  const pruning = { rule: 'median', warmupSteps: 200, minCompleted: 1, metric: 'loss' } as const;
  const spec: CampaignSpecInput = {
    ...fastBuiltinSpec(campaignId, {
      innerLoop: {
        budget: { experiments: o.experiments, parallelism: 2 },
        batchSize: 2,
        startupTrials: o.experiments,
        seed: o.seed,
        maxTrainingAttempts: 3,
        pruning,
        ...shape,
      },
      // Every iteration trains, so both are compared with the fault-free run.
      outerLoop: { minNewFeedback: 0, innerBudget: { experiments: o.experiments } },
    }),
    ...backend,
  } as CampaignSpecInput;
  spec.trainer = { ...spec.trainer, ...warm };
  // Runs long enough (several seconds each) for a fault to find a trainer at work.
  spec.searchSpace = { ...spec.searchSpace, steps: { type: 'int', low: 1200, high: 2000 } };
  fs.writeFileSync(specFile, JSON.stringify(spec));
  // The feedback the iterations critique, stored before they start (the API's concurrent writes go to another campaign).
  const fix = (i: number) => ({
    id: `${campaignId}-e${i}`,
    campaignId,
    kind: 'edit' as const,
    modelVersion: 'v0',
    prompt: `const total${i} = items.reduce((a, b) => `,
    output: 'a',
    correction: `a + b.price * ${i}, 0);\n`,
  });
  await storeFeedback(db, [1, 2, 3, 4, 5, 6].map(fix));
  const r = await runCli(env, ['outer', campaignId, '--spec', specFile, '--iterations', String(OUTER_ITERATIONS), '--detach'], 120_000);
  const workflowId = /started (\S+)/.exec(r.stderr)?.[1];
  if (r.status !== 0 || !workflowId) throw new Error(`flywheel outer failed: ${r.stderr.trim()}`);
  return { campaignId, workflowId, iterations: OUTER_ITERATIONS };
}
