// Pinning a custom task's inputs: a campaign spec names its dataset and eval suite as `NAME` or `NAME@version`; the
// campaign version records exact versions, so a dataset or suite registered later never changes what it runs. A bare
// name becomes its newest version (a dataset's newest base version, i.e. one registered with `flywheel dataset add`;
// a suite's highest N). An unknown name or version is one line naming it (UsageError).
import { and, desc, eq } from 'drizzle-orm';
import { NotFoundError, UsageError } from '../../core/errors';
import type { CampaignSpec, TaskSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { datasetVersions } from '../../db/schema';
import { resolveSuiteRef } from '../suites/suite-queries';

/** The spec with its task's dataset and suite pinned to exact versions (a built-in task is returned as it is). */
export async function pinTaskRefs(db: Db, spec: CampaignSpec, where?: string): Promise<CampaignSpec> {
  const task = await pinTask(db, spec.task, where);
  return task === spec.task ? spec : { ...spec, task };
}

export async function pinTask(db: Db, task: TaskSpec, where?: string): Promise<TaskSpec> {
  if (task.kind !== 'custom') return task;
  const prefix = where ? `${where}: ` : '';
  const dataset = await resolveDatasetRef(db, task.dataset).catch((e: unknown) => refuse(e, `${prefix}task.dataset`));
  const suite = await resolveSuiteRef(db, task.suite).catch((e: unknown) => refuse(e, `${prefix}task.suite`));
  return dataset === task.dataset && suite === task.suite ? task : { ...task, dataset, suite };
}

function refuse(e: unknown, field: string): never {
  if (e instanceof NotFoundError) throw new UsageError(`${field}: ${e.message}`);
  throw e;
}

/**
 * The dataset version a reference names: `NAME@<version>` as it is (when it is a version of NAME), a bare `NAME` the
 * newest version registered with `flywheel dataset add` (no parents). NotFoundError naming what was asked.
 */
export async function resolveDatasetRef(db: Db, ref: string): Promise<string> {
  const at = ref.indexOf('@');
  const name = at < 0 ? ref : ref.slice(0, at);
  if (at >= 0) {
    const [row] = await db
      .select({ id: datasetVersions.id })
      .from(datasetVersions)
      .where(and(eq(datasetVersions.id, ref), eq(datasetVersions.datasetId, name)));
    if (row) return row.id;
    const [any] = await db.select({ id: datasetVersions.id }).from(datasetVersions).where(eq(datasetVersions.datasetId, name)).limit(1);
    throw new NotFoundError(
      any
        ? `dataset version "${ref}" is not registered (flywheel dataset show ${name} lists its versions)`
        : `dataset "${name}" is not registered (flywheel dataset add ${name} FILE.jsonl)`,
    );
  }
  const [newest] = await db
    .select({ id: datasetVersions.id })
    .from(datasetVersions)
    .where(and(eq(datasetVersions.datasetId, name), eq(datasetVersions.parentIds, [])))
    .orderBy(desc(datasetVersions.createdAt), desc(datasetVersions.id))
    .limit(1);
  if (!newest) throw new NotFoundError(`dataset "${name}" is not registered (flywheel dataset add ${name} FILE.jsonl)`);
  return newest.id;
}
