// Makes a campaign's task ready (the prepareTask activity's work): its eval suite and base dataset version, as the
// task provides them (core/task.ts `sources`): built by the task and stored once (the built-in code task's), or the
// registered versions the campaign version pinned (a custom task's: `flywheel dataset add`, `flywheel suite add`;
// a pinned version that has since vanished is a NotFoundError). Every row has a deterministic key: a retry upserts.
import { NotFoundError } from '../../core/errors';
import type { CampaignSpec } from '../../core/spec';
import type { PreparedTask } from '../../contracts/campaign';
import type { Db } from '../../db/client';
import { resolveDatasetRef } from '../campaigns/pin-task';
import { datasetVersionExists, ensureBaseVersion } from '../datasets/base-version';
import { ensureBuiltSuite } from '../suites/built-suite';
import { resolveSuiteRef } from '../suites/suite-queries';
import { taskForSpec } from '../task-registry';

export interface PrepareTaskOptions {
  /** FLYWHEEL_HOME. */
  home: string;
  spec: CampaignSpec;
  /** Train on this dataset version instead of the task's base one (it must exist). */
  datasetVersionId?: string;
}

export async function prepareTaskOf(db: Db, o: PrepareTaskOptions): Promise<PreparedTask> {
  const { spec } = o;
  const sources = await taskForSpec(spec.task).sources({ home: o.home, task: spec.task, seed: spec.innerLoop.seed });
  // Registered versions hold exact ids; a bare name (a spec that bypassed registration) resolves to its newest.
  const suiteId =
    'registered' in sources.suite ? await resolveSuiteRef(db, sources.suite.registered) : await ensureBuiltSuite(db, sources.suite.built);
  if (o.datasetVersionId) {
    if (!(await datasetVersionExists(db, o.datasetVersionId)))
      throw new NotFoundError(`dataset version "${o.datasetVersionId}" does not exist`);
    return { datasetVersionId: o.datasetVersionId, suiteId };
  }
  const datasetVersionId =
    'registered' in sources.base
      ? await resolveDatasetRef(db, sources.base.registered)
      : await ensureBaseVersion(db, o.home, spec.name, sources.base.built);
  return { datasetVersionId, suiteId };
}
