// `flywheel up`: the whole local stack in the foreground — Temporal, PostgreSQL, one worker per queue family —
// until Ctrl-C, which stops everything it started.
import type { Command } from 'commander';
import { sandboxStatusLine } from '../../backends/sandbox/bubblewrap';
import { resolveConfig } from '../../core/config';
import { EXIT_FAILURE } from '../errors';
import { dashboardPort } from '../serve-dashboard';

export function registerUp(program: Command): void {
  program
    .command('up')
    .description('start Temporal, PostgreSQL and the workers, and keep them running until Ctrl-C')
    .addHelpText(
      'after',
      `
Examples:
  $ flywheel up                                   # dev server + embedded PostgreSQL under ./.flywheel
  $ TEMPORAL_ADDRESS=temporal:7233 DATABASE_URL=postgres://u:p@db/flywheel flywheel up

Environment: FLYWHEEL_HOME, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS*, TEMPORAL_API_KEY,
DATABASE_URL, FLYWHEEL_TEMPORAL_PORT, FLYWHEEL_TEMPORAL_UI_PORT, FLYWHEEL_PG_PORT,
FLYWHEEL_DASHBOARD_PORT (the web dashboard, default 8788; "off" for none), FLYWHEEL_API_TOKEN (guards it).
Logs of each component are in $FLYWHEEL_HOME/logs/.
`,
    )
    .action(async () => {
      const config = resolveConfig(process.env, process.cwd());
      console.log(`flywheel up  home ${config.home}`);
      console.log(`flywheel up  ${sandboxStatusLine()}`);
      // Loaded here, not at the top: the Temporal SDK takes a second to load and other commands do not need it.
      const { startStack } = require('../../stack/stack') as typeof import('../../stack/stack');
      const { formatStackEvent } = require('../../stack/events') as typeof import('../../stack/events');
      // Listen before starting: a Ctrl-C during start-up stops the stack as soon as it is up. A second one exits at
      // once; the stack's exit hook still signals every child, it just does not wait for them.
      let signals = 0;
      const signalled = new Promise<NodeJS.Signals>((resolve) => {
        const onSignal = (s: NodeJS.Signals): void => {
          if (++signals === 1) return resolve(s);
          console.error('flywheel: second signal: exiting without waiting for the stack to stop');
          process.exit(130);
        };
        for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, onSignal);
      });
      const uiPort = process.env.FLYWHEEL_DASHBOARD_PORT === 'off' ? undefined : dashboardPort();
      const stack = await startStack(config, { onEvent: (e) => console.log(formatStackEvent(e)) });
      const dashboard =
        uiPort === undefined
          ? undefined
          : await startUpDashboard(config, stack.databaseUrl, uiPort).catch((e: Error) => {
              console.error(`flywheel: dashboard not started: ${e.message}`);
              return undefined;
            });
      const outcome = await Promise.race([signalled.then((s) => ({ signal: s })), stack.failed.then((error) => ({ error }))]);
      if ('error' in outcome) console.error(`flywheel: ${outcome.error.message}`);
      await dashboard?.close();
      await stack.stop();
      if ('error' in outcome) process.exitCode = EXIT_FAILURE;
    });
}

/** The dashboard on the stack just started (its database and Temporal, found through stack.json like any command). */
async function startUpDashboard(config: import('../../core/config').FlywheelConfig, databaseUrl: string, port: number) {
  const { openDb } = require('../../db/client') as typeof import('../../db/client');
  const { resolveEndpoints } = require('../../stack/endpoints') as typeof import('../../stack/endpoints');
  const { serveDashboard } = require('../serve-dashboard') as typeof import('../serve-dashboard');
  const dbh = openDb(databaseUrl, { max: 5 });
  const server = await serveDashboard({
    config,
    db: dbh.db,
    endpoints: resolveEndpoints(config),
    port,
    host: '127.0.0.1',
    token: process.env.FLYWHEEL_API_TOKEN || undefined,
  }).catch(async (e) => {
    await dbh.close();
    throw e;
  });
  console.log(`dashboard        ${server.url}`);
  return { close: async () => (await server.close(), await dbh.close()) };
}
