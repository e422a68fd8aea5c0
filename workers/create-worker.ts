// Builds the Temporal worker of one queue family: its activities from createActivities(deps), and for the
// orchestration family also the workflows (from a cached bundle, since bundling takes seconds).
import os from 'node:os';
import path from 'node:path';
import type { Duration } from '@temporalio/common';
import { Worker, type NativeConnection } from '@temporalio/worker';
import type { FlywheelConfig } from '../core/config';
import { taskQueue, type QueueFamily } from '../contracts/queues';
import { createActivities, type ActivityDeps } from '../activities';
import { flywheelDataConverter } from '../temporal/data-converter';
import { cachedWorkflowBundle } from './workflow-bundle';

export interface CreateWorkerOptions {
  family: QueueFamily;
  config: FlywheelConfig;
  connection: NativeConnection;
  deps: ActivityDeps;
  /**
   * A prebuilt workflow bundle (orchestration only); with FLYWHEEL_PAYLOAD_KEY set, build it with
   * `failureConverterPath: ENCODED_FAILURES_PATH` or workflow failures stay plain text. @default a bundle cached under `<home>/cache`
   */
  workflowBundlePath?: string;
  /**
   * How long running activities get after shutdown starts before they are cancelled. Long activities
   * (awaitTraining) heartbeat their job handle, so a new worker reattaches rather than relaunching.
   * @default "5s"
   */
  shutdownGraceTime?: Duration;
}

/** `family@host:pid`: shown among a task queue's pollers, so a restarted worker is told apart from its predecessor. */
export function workerIdentity(family: QueueFamily): string {
  return `${family}@${os.hostname()}:${process.pid}`;
}

export async function createWorker(opts: CreateWorkerOptions): Promise<Worker> {
  const { family, config } = opts;
  const queue = taskQueue(family, config.taskQueuePrefix);
  const activities = { ...createActivities(opts.deps)[family], describeWorker: describeWorkerActivity(family, queue) };
  // Workflow code converts its failures inside the bundle: the bundle must carry the same failure converter.
  const dataConverter = flywheelDataConverter(config.payloadKeys);
  const bundle = async () =>
    (await cachedWorkflowBundle({ cacheDir: path.join(config.home, 'cache'), failureConverterPath: dataConverter?.failureConverterPath }))
      .codePath;
  const workflows = family === 'orchestration' ? { workflowBundle: { codePath: opts.workflowBundlePath ?? (await bundle()) } } : {};
  return Worker.create({
    connection: opts.connection,
    namespace: config.namespace,
    taskQueue: queue,
    identity: workerIdentity(family),
    dataConverter,
    activities,
    ...workflows,
    shutdownGraceTime: opts.shutdownGraceTime ?? '5s',
  });
}

/**
 * A diagnostic activity on every queue: it lets a family with no activities yet still start (the SDK refuses a
 * worker that polls nothing), and lets a test or an operator run a trivial task through a given queue.
 */
function describeWorkerActivity(family: QueueFamily, queue: string) {
  return async (): Promise<{ family: QueueFamily; taskQueue: string; pid: number; identity: string }> => ({
    family,
    taskQueue: queue,
    pid: process.pid,
    identity: workerIdentity(family),
  });
}
