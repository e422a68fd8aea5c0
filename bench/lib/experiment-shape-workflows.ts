// The workflows of bench/experiment-shape.ts: N experiments, PARALLEL at a time, each making an experiment's calls
// (a training activity on one task queue, a scoring activity on another, a local bookkeeping activity), either each
// as a child workflow (Flywheel's shape: the inner loop's batch starts an `experiment` child per proposal) or each as
// a coroutine of the one parent workflow (the shape of "several experiments per workflow"). No work of their own.
import { executeChild, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';

export interface ShapeActivities {
  train(i: number): Promise<void>;
  score(i: number): Promise<void>;
  finish(i: number): Promise<void>;
}

export type Shape = 'children' | 'inline';

/** One experiment's calls, in order. */
export async function shapeExperiment(i: number): Promise<void> {
  const { train } = proxyActivities<ShapeActivities>({ taskQueue: 'shape-training', startToCloseTimeout: '1 minute' });
  const { score } = proxyActivities<ShapeActivities>({ taskQueue: 'shape-eval', startToCloseTimeout: '1 minute' });
  const { finish } = proxyLocalActivities<ShapeActivities>({ startToCloseTimeout: '1 minute' });
  await train(i);
  await score(i);
  await finish(i);
}

/** `n` experiments, `parallel` at a time, in the given shape. */
export async function shapeBatch(shape: Shape, n: number, parallel: number): Promise<void> {
  let next = 0;
  const parent = workflowInfo().workflowId;
  const lane = async () => {
    while (next < n) {
      const i = next++;
      if (shape === 'inline') await shapeExperiment(i);
      else await executeChild(shapeExperiment, { workflowId: `${parent}/e${i}`, args: [i] });
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
}
