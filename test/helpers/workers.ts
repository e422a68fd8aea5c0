// In-process workers for workflow tests: all three queue families on one test server, under a queue prefix
// unique to the test file, with the workflow bundle built once in the global set-up.
import { NativeConnection, Runtime, Worker, DefaultLogger } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';
import { PredictServers } from '../../activities/eval/predict-servers';
import type { Db } from '../../db/client';
import { QUEUE_FAMILIES, taskQueue, type QueueFamily } from '../../contracts/queues';
import { activityCancelRequested, workflowLiveness, workflowStatus } from '../../workers/workflow-liveness';
import { temporalAddress, workflowBundlePath } from './env';

let runtimeInstalled = false;

export interface TestWorkers {
  prefix: string;
  /** The workers' warm predict servers (closed by stop()). */
  predictServers: PredictServers;
  stop(): Promise<void>;
}

/** `address`: another Temporal server than the run's shared one (a test that restarts its own). */
export async function startTestWorkers(opts: {
  prefix: string;
  db: Db;
  home: string;
  families?: QueueFamily[];
  agentEnv?: ActivityDeps['agentEnv'];
  address?: string;
}): Promise<TestWorkers> {
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    runtimeInstalled = true;
  }
  const connection = await NativeConnection.connect({ address: opts.address ?? temporalAddress() });
  const predictServers = new PredictServers();
  const activities = createActivities({
    predictServers,
    db: opts.db,
    home: opts.home,
    isWorkflowRunning: workflowLiveness(connection),
    workflowStatus: workflowStatus(connection),
    activityCancelRequested: activityCancelRequested(connection),
    agentEnv: opts.agentEnv,
  });
  const workers = await Promise.all(
    (opts.families ?? [...QUEUE_FAMILIES]).map((family) =>
      Worker.create({
        connection,
        taskQueue: taskQueue(family, opts.prefix),
        activities: activities[family],
        ...(family === 'orchestration' ? { workflowBundle: { codePath: workflowBundlePath() } } : {}),
        shutdownGraceTime: '1s',
      }),
    ),
  );
  const running = workers.map((w) => w.run());
  let stopped = false;
  return {
    prefix: opts.prefix,
    predictServers,
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const w of workers) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.allSettled(running);
      predictServers.close();
      await connection.close();
    },
  };
}
