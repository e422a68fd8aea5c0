// `flywheel worker --queue <family>`: one worker process. `flywheel up` starts one per family; run it by hand
// to add capacity or to serve a queue against an external cluster.
import { Option, type Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { QUEUE_FAMILIES, type QueueFamily } from '../../core/queues';
import type { WorkerReadyMessage } from '../../infra/dev-stack/worker-supervisor';

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
      const { findRunningStack } = require('../../infra/dev-stack/stack-state') as typeof import('../../infra/dev-stack/stack-state');
      const config = resolveConfig(process.env, process.cwd());
      const stack = config.temporalAddress && config.databaseUrl ? undefined : findRunningStack(config.home);
      if (stack) {
        config.temporalAddress ??= stack.temporal.address;
        config.databaseUrl ??= stack.postgres.url;
        if (!process.env.TEMPORAL_NAMESPACE) config.namespace = stack.temporal.namespace;
      }
      await runWorker({
        family: opts.queue,
        config,
        workflowBundlePath: opts.workflowBundle,
        onReady: ({ taskQueue }) => {
          console.log(`worker ${opts.queue} polling ${taskQueue}`);
          const ready: WorkerReadyMessage = { type: 'flywheel-worker-ready', taskQueue };
          process.send?.(ready);
        },
      });
    });
}
