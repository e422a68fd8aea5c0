// `flywheel export mlflow CAMPAIGN`: every experiment of the campaign as a run of the MLflow experiment named for the
// campaign. Idempotent: a run is found by its `flywheel.experiment_id` tag and updated (MLflow keeps a metric point or
// param logged again unchanged once), so a re-export adds the new points and never a second run.
import type { Db } from '../../db/client';
import { experimentsToExport } from '../queries/experiments-to-export';
import { mlflowClient } from './mlflow-client';
import { EXPERIMENT_TAG, mlflowRunOf } from './mlflow-run';

export interface MlflowExportResult {
  trackingUri: string;
  /** The MLflow experiment (named for the campaign) and its id. */
  experiment: { name: string; id: string };
  created: number;
  updated: number;
}

export async function exportToMlflow(db: Db, campaignId: string, trackingUri: string): Promise<MlflowExportResult> {
  const client = mlflowClient(trackingUri);
  const rows = await experimentsToExport(db, campaignId);
  const experimentId = await client.experimentId(campaignId);
  const result: MlflowExportResult = { trackingUri, experiment: { name: campaignId, id: experimentId }, created: 0, updated: 0 };
  for (const row of rows) {
    const run = mlflowRunOf(campaignId, row);
    const [found] = await client.runsTagged(experimentId, EXPERIMENT_TAG, row.id);
    const runId = found ?? (await client.createRun(experimentId, run.runName, run.startTime, run.tags));
    if (found) result.updated++;
    else result.created++;
    await client.logBatch(runId, { metrics: run.metrics, params: run.params, tags: run.tags });
    await client.updateRun(runId, run.status, run.endTime);
  }
  return result;
}
