// `flywheel export mlflow CAMPAIGN`: the campaign's experiments as MLflow runs, in the tracker researchers already use
// (services/mlflow/). Public figures only: params, training curves, public-split metrics, versions and verdicts.
import type { Command } from 'commander';
import { exportToMlflow } from '../../services/mlflow/export-to-mlflow';
import { UsageError } from '../errors';
import { requireCampaign } from '../require-campaign';
import { withDb } from '../with-db';

export function registerExport(program: Command): void {
  const exp = program
    .command('export')
    .description("a campaign's experiments in another tool")
    .addHelpText('after', '\nExample:\n  $ flywheel export mlflow builtin-demo --tracking-uri http://127.0.0.1:5000\n');
  exp
    .command('mlflow')
    .description('write each experiment as an MLflow run: params, training curves, public scores, versions and the gate verdict')
    .argument('<campaign>', 'the campaign to export (its MLflow experiment takes the same name)')
    .option('--tracking-uri <uri>', 'the MLflow tracking server (default: MLFLOW_TRACKING_URI)')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Idempotent: a run is found by its flywheel.experiment_id tag and updated, never written twice. Nothing held out',
        'is sent: no held-out or test item, text, per-item outcome or score.',
        'Exit codes: 0 exported, 1 the tracking server failed, 2 unknown campaign or no tracking URI.',
        '',
        'Example:',
        '  $ flywheel export mlflow builtin-demo --tracking-uri http://127.0.0.1:5000',
        '  exported 12 experiments of builtin-demo to MLflow experiment "builtin-demo" (id 1) at http://127.0.0.1:5000: 12 created, 0 updated',
        '',
      ].join('\n'),
    )
    .action(async (campaign: string, opts: { trackingUri?: string; json?: boolean }) => {
      const uri = opts.trackingUri ?? process.env.MLFLOW_TRACKING_URI;
      if (!uri) throw new UsageError('no MLflow tracking server: give --tracking-uri URI or set MLFLOW_TRACKING_URI');
      const r = await withDb(async (db) => {
        await requireCampaign(db, campaign);
        return exportToMlflow(db, campaign, uri);
      });
      if (opts.json) return console.log(JSON.stringify(r));
      console.log(
        `exported ${r.created + r.updated} experiments of ${campaign} to MLflow experiment "${r.experiment.name}" (id ${r.experiment.id}) at ${r.trackingUri}: ${r.created} created, ${r.updated} updated`,
      );
    });
}
