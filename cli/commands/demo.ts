// `flywheel demo`: the built-in campaign end to end. Brings up the embedded stack if none is running,
// runs the inner loop to the end, prints the held-out score before and after with the winning configuration.
import path from 'node:path';
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { formatStackEvent } from '../../infra/dev-stack/events';
import { startStack, type RunningStack } from '../../infra/dev-stack/stack';
import { startInnerLoopWorkflow } from '../campaign-loops';
import { resolveEndpoints, type Endpoints } from '../endpoints';
import { EXIT_FAILURE } from '../errors';
import { detachOnSigint } from '../detach';
import { followLoop } from '../follow-loop';
import { uiLink, withSession } from '../session';
import { loadSpecFile } from '../spec-file';

export const DEMO_SPEC = path.join(__dirname, '..', '..', 'infra', 'campaigns', 'builtin-demo.yaml');

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the built-in campaign end to end (starts the embedded stack if none is running)')
    .option('--experiments <n>', 'experiments in the inner loop (default: the demo spec\'s)', (v) => Number(v))
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExample:\n  $ npx flywheel demo\n')
    .action(async (opts: { experiments?: number; json?: boolean }) => {
      const spec = loadSpecFile(DEMO_SPEC);
      if (opts.experiments) spec.innerLoop.budget.experiments = opts.experiments;
      const config = resolveConfig(process.env, process.cwd());
      let stack: RunningStack | undefined;
      const ctrlC = detachOnSigint();
      let endpoints: Endpoints | undefined = resolveEndpoints(config);
      try {
        if (!endpoints) {
          console.error('no running stack: starting the embedded one (Temporal dev server, PostgreSQL, workers)');
          stack = await startStack(config, { onEvent: (e) => console.error(formatStackEvent(e)) });
          endpoints = { temporalAddress: stack.temporalAddress, namespace: stack.namespace, databaseUrl: stack.databaseUrl, taskQueuePrefix: config.taskQueuePrefix, uiUrl: stack.uiUrl };
        }
        const result = await withSession(async (s) => {
          const handle = await startInnerLoopWorkflow(s.client, s.endpoints, spec);
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
