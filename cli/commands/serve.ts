// `flywheel serve`: the feedback API and the production model's completions in the foreground until Ctrl-C, on the
// stack's PostgreSQL or DATABASE_URL.
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { openDb } from '../../db/client';
import { startFeedbackServer, type FeedbackServer } from '../../server/feedback-server';
import { requireDatabaseUrl, resolveEndpoints } from '../../stack/endpoints';
import { dashboardPort, serveDashboard } from '../serve-dashboard';
import { checkBindHost } from '../../server/http/bearer-token';
import { integerOption } from '../integer-option';
import { hfPython } from '../../stack/hf-env';
import { ENGINE_CHOICES, type EngineChoice } from '../../server/hf/inference-engine';
import { UsageError } from '../../core/errors';

export function registerServe(program: Command): void {
  // The port the dashboard will really use without --dashboard-port, shown as such in --help.
  const uiPortDefault = process.env.FLYWHEEL_DASHBOARD_PORT ?? '8788';
  program
    .command('serve')
    .description(
      'serve the feedback API and the production model: POST /v1/feedback, POST /v1/feedback:batch, POST /v1/complete, GET /healthz',
    )
    .option('--port <port>', 'TCP port (0: any free port)', '8787')
    .option('--host <host>', 'address to bind; anything but loopback exposes the API to the network', '127.0.0.1')
    .option('--dashboard-port <port>', 'TCP port of the web dashboard (0: any free port; env FLYWHEEL_DASHBOARD_PORT)', uiPortDefault)
    .option('--no-dashboard', 'serve the API only')
    .option(
      '--hf-engine <engine>',
      'what serves a Hugging Face production checkpoint: auto (vLLM when importable and a GPU is present), vllm, transformers',
      'auto',
    )
    .addHelpText(
      'after',
      [
        '',
        'Writes and completions need "Authorization: Bearer $FLYWHEEL_API_TOKEN" when FLYWHEEL_API_TOKEN is set.',
        'The dashboard (campaigns, leaderboards, curves, decisions) is on --dashboard-port; with a token, open it once',
        `as http://127.0.0.1:${uiPortDefault}/?token=$FLYWHEEL_API_TOKEN (a cookie keeps you signed in).`,
        'A Hugging Face (hf-causal-lm-v1) production checkpoint is answered by a warm inference process on the HF',
        "environment's interpreter (FLYWHEEL_HF_PYTHON, else $FLYWHEEL_HOME/hf-venv): Flywheel's own server loading the",
        'frozen safetensors, or vLLM; a promotion starts the new one and switches once it answers.',
        '',
        'Example:',
        '  $ FLYWHEEL_API_TOKEN=s3cret flywheel serve --port 8787',
        '  $ curl -s -H "Authorization: Bearer s3cret" -d \'{"id":"evt-1","campaignId":"builtin-demo","kind":"accept",\\',
        '      "modelVersion":"ckpt-7","prompt":"def add(","output":"a, b):"}\' http://127.0.0.1:8787/v1/feedback',
        '  {"inserted":1,"duplicates":0}',
        '  $ curl -s -H "Authorization: Bearer s3cret" -d \'{"campaignId":"builtin-demo","prompt":"export function ","maxBytes":16}\' \\',
        '      http://127.0.0.1:8787/v1/complete',
        '  {"completion":"...","modelVersion":"<the promoted checkpoint id>"}',
        '',
      ].join('\n'),
    )
    .action(async (opts: { port: string; host: string; dashboardPort: string; dashboard: boolean; hfEngine: string }) => {
      if (!ENGINE_CHOICES.includes(opts.hfEngine as EngineChoice))
        throw new UsageError(`--hf-engine: "${opts.hfEngine}" is not one of ${ENGINE_CHOICES.join(', ')}`);
      const uiPort = opts.dashboard ? dashboardPort(opts.dashboardPort, '--dashboard-port') : undefined;
      const port = integerOption('--port', 0, 65535)(opts.port);
      const token = process.env.FLYWHEEL_API_TOKEN || undefined;
      checkBindHost(opts.host, token, 'write feedback and call the model');
      const config = resolveConfig(process.env, process.cwd());
      const dbh = openDb(requireDatabaseUrl(config), { max: 10 });
      let server: FeedbackServer | undefined;
      let dashboard: { url: string; close(): Promise<void> } | undefined;
      try {
        server = await startFeedbackServer({
          db: dbh.db,
          port,
          host: opts.host,
          token,
          hf: { python: hfPython(config.home), home: config.home, engine: opts.hfEngine as EngineChoice },
        });
        if (!token)
          console.error(`warning: FLYWHEEL_API_TOKEN is not set: anyone who can reach ${server.url} can write feedback and call the model`);
        dashboard =
          uiPort === undefined
            ? undefined
            : await serveDashboard({ config, db: dbh.db, endpoints: resolveEndpoints(config), port: uiPort, host: opts.host, token });
        console.log(`feedback API and completions on ${server.url}${dashboard ? `, dashboard on ${dashboard.url}` : ''} (Ctrl-C to stop)`);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
      } finally {
        // The inference processes stop with the server: none outlives `serve`.
        await server?.close();
        await dashboard?.close();
        await dbh.close();
      }
    });
}
