// A custom task is ready once registered: its dataset version (`flywheel dataset add`) and eval suite (`flywheel suite
// add`) are the ones the campaign version pinned. Nothing is built here; a pinned version that has since vanished (a
// database restored without it) is a NotFoundError. The contamination check, held-out custody and probes then apply
// to it as to the built-in task: they read the dataset version and the suite by id.
import { eq } from 'drizzle-orm';
import { NotFoundError } from '../../core/errors';
import type { CustomTaskSpec } from '../../core/spec';
import { datasetVersions } from '../../db/schema';
import { resolveDatasetRef } from '../../services/campaigns/pin-task';
import { resolveSuiteRef } from '../../services/suites/suite-queries';
import type { PrepareTaskInput, PreparedTask } from '../../contracts/campaign';
import type { ActivityDeps } from '../deps';

export async function prepareCustomTask(deps: ActivityDeps, task: CustomTaskSpec, input: PrepareTaskInput): Promise<PreparedTask> {
  const { db } = deps;
  // Registered versions hold exact ids; a bare name (a spec that bypassed registration) resolves to its newest.
  const suiteId = await resolveSuiteRef(db, task.suite);
  if (input.datasetVersionId) {
    const [v] = await db.select({ id: datasetVersions.id }).from(datasetVersions).where(eq(datasetVersions.id, input.datasetVersionId));
    if (!v) throw new NotFoundError(`dataset version "${input.datasetVersionId}" does not exist`);
    return { datasetVersionId: v.id, suiteId };
  }
  return { datasetVersionId: await resolveDatasetRef(db, task.dataset), suiteId };
}
