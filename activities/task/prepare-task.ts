// prepareTask: makes the campaign's task ready: its eval suite and base dataset version, as its Task provides them
// (core/task.ts; the built-in code task builds them once, a custom task's are the registered versions the campaign
// version pinned). The work and its rows are services/tasks/prepare-task.ts's: every row has a deterministic key, so a retry upserts.
import type { PrepareTaskInput, PreparedTask } from '../../contracts/campaign';
import { prepareTaskOf } from '../../services/tasks/prepare-task';
import { campaignsOf, type ActivityDeps } from '../deps';

export async function prepareTask(deps: ActivityDeps, input: PrepareTaskInput): Promise<PreparedTask> {
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  return prepareTaskOf(deps.db, { home: deps.home, spec, datasetVersionId: input.datasetVersionId });
}
