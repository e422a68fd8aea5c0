// `flywheel demo`: an example campaign end to end. Brings up the embedded stack if none is running,
// runs the inner loop to the end, prints the held-out score before and after with the winning configuration.
// `--task arithmetic` runs a task that takes the user's path (cli/task-demo.ts): dataset add, suite add, run.
import path from 'node:path';
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { formatStackEvent } from '../../stack/events';
import { startStack, type RunningStack } from '../../stack/stack';
import { startInnerLoopWorkflow } from '../../services/campaign-loops';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { resolveEndpoints, type Endpoints } from '../../stack/endpoints';
import { EXIT_FAILURE, UsageError } from '../errors';
import { runOuterDemo } from '../outer-demo';
import { detachOnSigint } from '../detach';
import { followLoop } from '../follow-loop';
import { freshDemoCampaign } from '../../services/demo-campaign';
import { withSession, type Session } from '../session';
import { uiLink } from '../../temporal/ui-links';
import { loadSpecFile } from '../spec-file';
import { EXAMPLE_TASK_NAMES, exampleTask } from '../../services/example-tasks';
import { runTaskDemo } from '../task-demo';

/** Experiments per inner loop in `demo --outer`: three iterations stay well inside 15 minutes on 2 cores. */
const OUTER_DEMO_EXPERIMENTS = 8;

export const DEMO_SPEC = path.join(__dirname, '..', '..', 'tasks', 'builtin-code', 'builtin-demo.yaml');
const DEFAULT_TASK = 'builtin-code';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run an example campaign end to end (starts the embedded stack if none is running)')
    .option('--task <name>', `the example task: ${EXAMPLE_TASK_NAMES.join(' or ')}`, DEFAULT_TASK)
    .option('--experiments <n>', "experiments in the inner loop (default: the demo spec's)", (v) => Number(v))
    .option('--outer <n>', 'run N outer iterations instead (simulated users, critiques, dataset versions, the promotion gate)', (v) =>
      Number(v),
    )
    .option('--users-events <n>', 'feedback events the simulated users send before each outer iteration', (v) => Number(v), 150)
    .option('--seed <n>', "the seed of the sampler, the trainers and the simulated users (default: the demo spec's, 1)", (v) => Number(v))
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ npx flywheel demo\n  $ npx flywheel demo --outer 3\n  $ npx flywheel demo --task arithmetic\n  $ npx flywheel demo --task arithmetic --outer 3\n',
    )
    .action(async (opts: { task: string; experiments?: number; outer?: number; usersEvents: number; seed?: number; json?: boolean }) => {
      const task = exampleTask(opts.task);
      if (opts.outer !== undefined && !(Number.isInteger(opts.outer) && opts.outer >= 1))
        throw new UsageError(`--outer must be a positive integer, got ${opts.outer}`);
      if (!(Number.isInteger(opts.usersEvents) && opts.usersEvents >= 1))
        throw new UsageError(`--users-events must be a positive integer, got ${opts.usersEvents}`);
      if (opts.seed !== undefined && !Number.isSafeInteger(opts.seed)) throw new UsageError(`--seed must be an integer, got ${opts.seed}`);
      const spec = loadSpecFile(task.spec);
      if (opts.seed !== undefined) spec.innerLoop.seed = opts.seed;
      if (opts.experiments) spec.innerLoop.budget.experiments = opts.experiments;
      if (opts.outer) spec.innerLoop.budget.experiments = opts.experiments ?? OUTER_DEMO_EXPERIMENTS;
      const config = resolveConfig(process.env, process.cwd());
      let stack: RunningStack | undefined;
      const ctrlC = detachOnSigint();
      let endpoints: Endpoints | undefined = resolveEndpoints(config);
      try {
        if (!endpoints) {
          console.error('no running stack: starting the embedded one (Temporal dev server, PostgreSQL, workers)');
          stack = await startStack(config, { onEvent: (e) => console.error(formatStackEvent(e)) });
          endpoints = {
            temporalAddress: stack.temporalAddress,
            namespace: stack.namespace,
            databaseUrl: stack.databaseUrl,
            taskQueuePrefix: config.taskQueuePrefix,
            uiUrl: stack.uiUrl,
          };
        }
        if (task.writeFiles) {
          const r = await runTaskDemo(config, endpoints, task, {
            seed: opts.seed,
            experiments: opts.experiments,
            outer: opts.outer,
            usersEvents: opts.usersEvents,
            json: !!opts.json,
          });
          if (!r.improved) process.exitCode = EXIT_FAILURE;
          return;
        }
        // A campaign of its own and a printed seed: the same seed gives the same figures on the same machine.
        const announce = async (s: Session): Promise<string> => {
          spec.name = await freshDemoCampaign(s.db, spec.name);
          const { versionId } = await registerCampaignVersion(s.db, spec);
          console.error(
            `campaign ${versionId} (new, so no earlier trials or feedback), seed ${spec.innerLoop.seed}: the same seed prints the same figures (--seed to change it)`,
          );
          return versionId;
        };
        if (opts.outer) {
          const outer = await withSession(async (s) => {
            const campaignVersionId = await announce(s);
            return runOuterDemo(s, spec, campaignVersionId, {
              iterations: opts.outer!,
              events: opts.usersEvents,
              seed: spec.innerLoop.seed,
              json: !!opts.json,
              users: task.users({ home: config.home, seed: spec.innerLoop.seed }),
            });
          }, endpoints);
          if (!outer.improved) process.exitCode = EXIT_FAILURE;
          return;
        }
        const result = await withSession(async (s) => {
          const handle = await startInnerLoopWorkflow(s.client, s.endpoints, await announce(s));
          const link = uiLink(s.endpoints, handle.workflowId);
          console.error(`started ${handle.workflowId}${link ? `\n  Temporal UI: ${link}` : ''}`);
          return followLoop(s, handle, spec, !!opts.json, ctrlC.requested);
        }, endpoints);
        const b = result?.heldout.baseline?.bits_per_byte;
        const w = result?.heldout.best?.bits_per_byte;
        if (result && (b === undefined || w === undefined || !(w < b))) process.exitCode = EXIT_FAILURE;
      } finally {
        ctrlC.dispose();
        await stack?.stop();
      }
    });
}
