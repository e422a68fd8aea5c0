// One worker process: connect to Temporal and PostgreSQL, serve one queue family until SIGINT/SIGTERM (or until
// the supervising `flywheel up` goes away), then drain and close everything.
import { NativeConnection, Runtime } from '@temporalio/worker';
import type { FlywheelConfig } from '../core/config';
import { taskQueue, type QueueFamily } from '../contracts/queues';
import { openDb } from '../db/client';
import { temporalConnectionOptions } from '../temporal/temporal-connection';
import { createWorker, workerIdentity } from './create-worker';
import { activityCancelRequested, workflowLiveness, workflowStatus } from './workflow-liveness';
import { UsageError } from '../core/errors';
import { PredictServers } from '../activities/eval/predict-servers';

export class DatabaseUrlMissingError extends UsageError {}

export interface RunWorkerOptions {
  family: QueueFamily;
  /**
   * Must carry temporalAddress and databaseUrl. May be a promise: under `flywheel up` the worker loads its code
   * while the servers start, and learns their addresses when they are ready.
   */
  config: FlywheelConfig | Promise<FlywheelConfig>;
  /** A prebuilt workflow bundle for the orchestration family. @default a bundle cached under `<home>/cache` */
  workflowBundlePath?: string;
  /** Called once the worker polls its queue. @default nothing */
  onReady?: (info: { taskQueue: string; identity: string }) => void;
  /** @default ["SIGINT", "SIGTERM"] */
  stopSignals?: NodeJS.Signals[];
}

export async function runWorker(opts: RunWorkerOptions): Promise<void> {
  const { family } = opts;
  // The workflow bundle (built or reused by createWorker) waits for the config: it carries the config's failure converter.
  const config = requireAddresses(await opts.config);
  installRuntime();
  const db = openDb(config.databaseUrl!);
  let connection: NativeConnection | undefined;
  const predictServers = new PredictServers({ perCampaign: config.warmPredictServers });
  const signals = opts.stopSignals ?? ['SIGINT', 'SIGTERM'];
  let stop = (): void => undefined;
  try {
    connection = await connectTemporal(config);
    const worker = await createWorker({
      family,
      config,
      connection,
      deps: {
        db: db.db,
        home: config.home,
        isWorkflowRunning: workflowLiveness(connection, config.namespace),
        workflowStatus: workflowStatus(connection, config.namespace),
        activityCancelRequested: activityCancelRequested(connection, config.namespace),
        predictServers,
      },
      workflowBundlePath: opts.workflowBundlePath,
    });
    stop = () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    };
    for (const s of signals) process.on(s, stop);
    // Under `flywheel up` the IPC channel closes when the supervisor dies: drain rather than linger as an orphan.
    if (process.connected) process.on('disconnect', stop);
    const running = worker.run();
    opts.onReady?.({ taskQueue: taskQueue(family, config.taskQueuePrefix), identity: workerIdentity(family) });
    await running;
  } finally {
    for (const s of signals) process.off(s, stop);
    process.off('disconnect', stop);
    predictServers.close();
    await connection?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
  }
}

/** The core SDK's connect error is a Rust debug string; say what failed in one line instead. */
async function connectTemporal(config: FlywheelConfig): Promise<NativeConnection> {
  const options = temporalConnectionOptions(config);
  try {
    return await NativeConnection.connect(options);
  } catch (e) {
    const msg = (e as Error).message;
    const why = /message: "([^"]+)"/.exec(msg)?.[1] ?? msg.split('\n')[0];
    throw new Error(`cannot reach Temporal at ${options.address}: ${why}`, { cause: e });
  }
}

function requireAddresses(config: FlywheelConfig): FlywheelConfig {
  if (!config.databaseUrl)
    throw new DatabaseUrlMissingError('DATABASE_URL is not set and no `flywheel up` stack is running under ' + config.home);
  temporalConnectionOptions(config); // throws TemporalAddressMissingError, or on an unreadable certificate
  return config;
}

/** The SDK's runtime would call shutdown() itself on SIGINT/SIGTERM; we own the signals so shutdown happens once, here. */
function installRuntime(): void {
  try {
    Runtime.install({ shutdownSignals: [] });
  } catch {
    /* already installed by the embedding process: keep its runtime */
  }
}
