// Which metrics a campaign's suite reports, and the spec's metric names it does not: `selection.metric` and the
// gate's `outerLoop.promotion.metric` must each be one (`flywheel validate` and the inner loop's settings check).
// The built-in task's suite is known by its shape, with no database; a custom task's is read from its items.
import { LOSS_METRIC, metricsOf, unreportedMetricProblem } from '../../core/eval-suite/suite-metrics';
import { lossScoredFor } from '../../core/trainer-program';
import type { CampaignSpec, TaskSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { BUILTIN_SUITE_LABEL, builtinSuiteShape } from '../../tasks/builtin-code/suite-shape';
import { publicMetricItems, resolveSuiteRef } from './suite-queries';

export interface ReportedMetrics {
  /** The suite's id (`NAME@N`), or `builtin-code` for the built-in task's. */
  suite: string;
  metrics: string[];
}

/** The metrics the task's suite reports on its public split. A custom task needs `db` (NotFoundError for an unknown suite). */
export async function reportedMetrics(db: Db | undefined, task: TaskSpec): Promise<ReportedMetrics> {
  if (task.kind !== 'custom') return { suite: BUILTIN_SUITE_LABEL, metrics: metricsOf(builtinSuiteShape()) };
  if (!db) throw new Error('reportedMetrics: a custom task needs the database');
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
