// `flywheel demo`: an example campaign end to end. Brings up the embedded stack if none is running,
// runs the inner loop to the end, prints the held-out score before and after with the winning configuration.
// `--task NAME` of a task that takes the user's path (one whose example writes its files) runs cli/task-demo.ts:
// dataset add, suite add, run. `--trainer hf` runs the task's Hugging Face campaign (`<spec>-hf.yaml`, from the base
// model `flywheel setup hf` builds) instead.
import fs from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from '../../core/errors';
import { hfBaseModel } from '../../backends/trainer-programs';
import { resolveConfig } from '../../core/config';
import { formatStackEvent } from '../../stack/events';
import { startStack, type RunningStack } from '../../stack/stack';
import { startInnerLoopWorkflow } from '../../services/campaign-loops';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { resolveEndpoints, type Endpoints } from '../../stack/endpoints';
import { EXIT_FAILURE } from '../errors';
import { integerOption } from '../integer-option';
import { runOuterDemo } from '../outer-demo';
import { detachOnSigint } from '../detach';
import { followLoop } from '../follow-loop';
import { freshDemoCampaign } from '../../services/demo-campaign';
import { withSession, type Session } from '../session';
import { uiLink } from '../../temporal/ui-links';
import { loadSpecFile } from '../spec-file';
import { DEFAULT_EXAMPLE_TASK, EXAMPLE_TASK_NAMES, exampleTask } from '../../services/example-tasks';
import { summaryMetricsOfSpec } from '../../services/task-registry';
import { heldoutImproved } from '../print-result';
import { runTaskDemo } from '../task-demo';

/** Experiments per inner loop in `demo --outer`: three iterations stay well inside 15 minutes on 2 cores. */
const OUTER_DEMO_EXPERIMENTS = 8;

/** The example's campaign for `--trainer`: its own spec (builtin), or the `-hf.yaml` beside it, which needs flywheel-base. */
function specForTrainer(spec: string, trainer: string, home: string): string {
  if (trainer === 'builtin') return spec;
  if (trainer !== 'hf') throw new UsageError(`demo: --trainer ${trainer}: unknown (builtin or hf)`);
  const hf = spec.replace(/\.yaml$/, '-hf.yaml');
  if (!fs.existsSync(hf)) throw new UsageError(`demo: --trainer hf: this task has no Hugging Face campaign (no ${hf})`);
  if (!hfBaseModel(home)) throw new UsageError('demo: --trainer hf: no base model flywheel-base on this host: run flywheel setup hf first');
  return hf;
}

interface DemoOptions {
  task: string;
  experiments?: number;
  outer?: number;
  usersEvents: number;
  seed?: number;
  trainer: string;
  json?: boolean;
}

/** The default example task's spec (the first example in the task registry). */
export const DEMO_SPEC = exampleTask(DEFAULT_EXAMPLE_TASK).spec;

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run an example campaign end to end (starts the embedded stack if none is running)')
    .option('--task <name>', `the example task: ${EXAMPLE_TASK_NAMES.join(' or ')}`, DEFAULT_EXAMPLE_TASK)
    .option('--experiments <n>', "experiments in the inner loop (default: the demo spec's)", integerOption('--experiments', 1))
    .option(
      '--outer <n>',
      'run N outer iterations instead (simulated users, critiques, dataset versions, the promotion gate)',
      integerOption('--outer', 1),
    )
    .option(
      '--users-events <n>',
      'feedback events the simulated users send before each outer iteration',
      integerOption('--users-events', 1),
      150,
    )
    .option(
      '--seed <n>',
      "the seed of the sampler, the trainers and the simulated users (default: the demo spec's, 1)",
      integerOption('--seed'),
    )
    .option(
      '--trainer <kind>',
      "builtin, or hf: the task's Hugging Face campaign (<task>-hf.yaml, fine-tuning flywheel-base; flywheel setup hf first)",
      'builtin',
    )
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ npx flywheel demo\n  $ npx flywheel demo --outer 3\n' +
        EXAMPLE_TASK_NAMES.filter((n) => n !== DEFAULT_EXAMPLE_TASK)
          .map((n) => `  $ npx flywheel demo --task ${n}\n  $ npx flywheel demo --task ${n} --outer 3\n`)
          .join('') +
        '  $ npx flywheel demo --task arithmetic --trainer hf\n',
    )
    .action(async (opts: DemoOptions) => {
      const config = resolveConfig(process.env, process.cwd());
      const example = exampleTask(opts.task);
      const task = { ...example, spec: specForTrainer(example.spec, opts.trainer, config.home) };
      const spec = loadSpecFile(task.spec);
      if (opts.seed !== undefined) spec.innerLoop.seed = opts.seed;
      if (opts.experiments) spec.innerLoop.budget.experiments = opts.experiments;
      if (opts.outer) spec.innerLoop.budget.experiments = opts.experiments ?? OUTER_DEMO_EXPERIMENTS;
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
        if (result && !heldoutImproved(result, summaryMetricsOfSpec(spec)[0])) process.exitCode = EXIT_FAILURE;
      } finally {
        ctrlC.dispose();
        await stack?.stop();
      }
    });
}
