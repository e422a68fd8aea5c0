// `flywheel worker --queue <family>`: one worker process. `flywheel up` starts one per family; run it by hand
// to add capacity or to serve a queue against an external cluster.
import { Option, type Command } from 'commander';
import { sandboxStatusLine } from '../../backends/sandbox/bubblewrap';
import { resolveConfig, type FlywheelConfig } from '../../core/config';
import { QUEUE_FAMILIES, type QueueFamily } from '../../contracts/queues';
import { AWAIT_START_ENV, type WorkerReadyMessage, type WorkerStartMessage } from '../../stack/worker-supervisor';

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('serve one task-queue family until SIGINT/SIGTERM, then drain and exit')
    .addOption(new Option('--queue <family>', 'the queue family to serve').choices(QUEUE_FAMILIES).makeOptionMandatory())
    .option('--workflow-bundle <file>', 'a prebuilt workflow bundle (orchestration only; default: built and cached under FLYWHEEL_HOME)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ flywheel worker --queue training\n  $ TEMPORAL_ADDRESS=temporal:7233 DATABASE_URL=postgres://... flywheel worker --queue orchestration\n' +
        '\nWithout TEMPORAL_ADDRESS / DATABASE_URL it joins the stack `flywheel up` runs on FLYWHEEL_HOME.\n',
    )
    .action(async (opts: { queue: QueueFamily; workflowBundle?: string }) => {
      // Loaded here, not at the top: the worker SDK takes a second to load and other commands do not need it.
      const { runWorker } = require('../../workers/main') as typeof import('../../workers/main');
      const initial = resolveConfig(process.env, process.cwd());
      if (opts.queue === 'training' || opts.queue === 'eval') console.log(`${new Date().toISOString()} ${sandboxStatusLine()}`);
      const config =
        process.env[AWAIT_START_ENV] === '1' ? awaitStart().then((env) => resolveConfig(env, process.cwd())) : joinRunningStack(initial);
      await runWorker({
        family: opts.queue,
        config,
        workflowBundlePath: opts.workflowBundle,
        onReady: ({ taskQueue }) => {
          console.log(`${new Date().toISOString()} worker ${opts.queue} polling ${taskQueue}`);
          const ready: WorkerReadyMessage = { type: 'flywheel-worker-ready', taskQueue };
          process.send?.(ready);
        },
      });
    });
}

/** Fills unset addresses from the stack `flywheel up` runs on the same home, if any. */
function joinRunningStack(config: FlywheelConfig): FlywheelConfig {
  if (config.temporalAddress && config.databaseUrl) return config;
  const { findRunningStack } = require('../../stack/stack-state') as typeof import('../../stack/stack-state');
  const stack = findRunningStack(config.home);
  if (!stack) return config;
  return {
    ...config,
    temporalAddress: config.temporalAddress ?? stack.temporal.address,
    databaseUrl: config.databaseUrl ?? stack.postgres.url,
    namespace: process.env.TEMPORAL_NAMESPACE ? config.namespace : stack.temporal.namespace,
  };
}

/** A preloaded worker waits for its supervisor's start message, which carries the servers' addresses. */
function awaitStart(): Promise<NodeJS.ProcessEnv> {
  return new Promise((resolve, reject) => {
    console.log(`${new Date().toISOString()} code loaded; waiting for the servers`);
    const onMessage = (m: WorkerStartMessage): void => {
      if (m?.type !== 'flywheel-worker-start') return;
      console.log(`${new Date().toISOString()} servers ready; connecting`);
      process.off('message', onMessage);
      process.off('disconnect', onDisconnect);
      resolve(m.env);
    };
    const onDisconnect = (): void => reject(new Error('the supervising flywheel up went away before the worker started'));
    process.on('message', onMessage);
    process.once('disconnect', onDisconnect);
  });
}
