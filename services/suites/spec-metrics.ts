// Which metrics a campaign's suite reports, and the spec's metric names it does not: `selection.metric` and the
// gate's `outerLoop.promotion.metric` must each be one (`flywheel validate` and the inner loop's settings check).
// A task that builds its own suite knows its shape (core/task.ts `suite`), with no database; a custom task's is read
// from its registered items.
import { LOSS_METRIC, metricsOf, unreportedMetricProblem } from '../../core/eval-suite/suite-metrics';
import { lossScoredFor } from '../../core/trainer-program';
import type { CampaignSpec, TaskSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { taskForSpec } from '../task-registry';
import { publicMetricItems, resolveSuiteRef } from './suite-queries';

export interface ReportedMetrics {
  /** The suite's id (`NAME@N`), or the label of a suite its task builds (its real id carries its content hash). */
  suite: string;
  metrics: string[];
}

/** The metrics the task's suite reports on its public split. A registered suite needs `db` (NotFoundError for an unknown one). */
export async function reportedMetrics(db: Db | undefined, task: TaskSpec): Promise<ReportedMetrics> {
  const shape = taskForSpec(task).suite;
  if (shape) return { suite: shape.label, metrics: metricsOf(shape.items()) };
  if (!('suite' in task))
    throw new Error(`reportedMetrics: the task of kind "${task.kind}" has neither a suite shape nor a registered suite`);
  if (!db) throw new Error('reportedMetrics: a registered suite needs the database');
  const suite = await resolveSuiteRef(db, task.suite);
  return { suite, metrics: metricsOf(await publicMetricItems(db, suite)) };
}

/**
 * One line per metric name in the spec that the suite does not report, listing the valid ones, and `bits_per_byte`
 * for a trainer whose checkpoints Flywheel cannot score (the reference PyTorch trainer's). A gate metric equal to
 * the selection metric (a custom task's default) is named once, under `selection.metric`.
 */
export function unreportedMetrics(spec: CampaignSpec, reported: ReportedMetrics): string[] {
  const { metric: selection } = spec.selection;
  const gate = spec.outerLoop.promotion.metric;
  const named: [string, string][] = [
    ['selection.metric', selection],
    ...(gate !== selection ? [['outerLoop.promotion.metric', gate] as [string, string]] : []),
  ];
  const unscored = lossScoredFor(spec.trainer.command) === 'no';
  return named
    .map(([field, metric]) =>
      unscored && metric === LOSS_METRIC
        ? `${field}: "${metric}" needs a checkpoint format Flywheel scores itself (trainer.command builtin or hf); this trainer's are not one`
        : unreportedMetricProblem(field, metric, reported.suite, reported.metrics),
    )
    .filter((p): p is string => p !== undefined);
}
