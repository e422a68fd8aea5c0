// The no-op inner loop the throughput benches time (cpu-per-experiment, durable-throughput, orchestration-overhead):
// N experiments of the fixture trainer (one step, no sleep unless asked), PARALLEL at a time, never stopped early,
// in one of three shapes: a child workflow per experiment (the default), inline (innerLoop.experimentWorkflows), or
// inline with warm trainers (trainer.warmTrain). Each bench asks for the shapes beyond `child` with the same flags.
import type { CampaignSpecInput } from '../../core/spec';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { fixtureSpec } from '../../test/helpers/specs';
import type { BenchStack } from './bench-stack';

/** How the loop runs its experiments: a child workflow each, inline, or inline with warm trainers. */
export type ExperimentShape = 'child' | 'inline' | 'warm';

/** The flags that add a shape to `child`, as every bench reads them. */
export const SHAPE_FLAGS = '[--inline] [--warm-train]';

/** The shapes the command line asks for (`child` always first), and its other arguments. */
export function shapesOf(argv: string[]): { shapes: ExperimentShape[]; rest: string[] } {
  const shapes: ExperimentShape[] = ['child'];
  if (argv.includes('--inline')) shapes.push('inline');
  if (argv.includes('--warm-train')) shapes.push('warm');
  return { shapes, rest: argv.filter((a) => a !== '--inline' && a !== '--warm-train') };
}

export interface NoopLoop {
  n: number;
  parallel: number;
  /** Capacity slots (backend.maxConcurrent). @default parallel */
  capacity?: number;
  /** The warm predict server (trainer.warmPredict) or a predict process per experiment. */
  warmPredict: boolean;
  shape: ExperimentShape;
  /** The fixture trainer's run time. @default 0 */
  sleepMs?: number;
  /** innerLoop.proposer. @default the spec's */
  proposer?: string;
}

export function noopCampaign(name: string, o: NoopLoop): CampaignSpecInput {
  const base = fixtureSpec(
    name,
    { steps: 1, sleepMs: o.sleepMs ?? 0 },
    {
      budget: { experiments: o.n, parallelism: o.parallel },
      batchSize: Math.max(o.parallel, 4),
      plateau: { patience: 1_000_000 },
      ...(o.proposer ? { proposer: o.proposer } : {}),
      ...(o.shape !== 'child' ? { experimentWorkflows: 'inline' } : {}),
    },
  );
  const trainer = { ...base.trainer, warmPredict: o.warmPredict, ...(o.shape === 'warm' ? { warmTrain: true } : {}) };
  return { ...base, trainer, backend: { kind: 'local', maxConcurrent: o.capacity ?? o.parallel } } as CampaignSpecInput;
}

/** Registers the campaign and runs its first inner loop to its end; the loop's workflow id. */
export async function runNoopLoop(stack: BenchStack, name: string, o: NoopLoop): Promise<string> {
  const { versionId } = await registerCampaignVersion(stack.db.db, noopCampaign(name, o));
  const workflowId = `${name}/inner/1`;
  await stack.client.workflow.execute('innerLoop', {
    taskQueue: `${stack.prefix}-orchestration`,
    workflowId,
    args: [{ campaignVersionId: versionId }],
  });
  return workflowId;
}
