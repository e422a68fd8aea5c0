// The platform's one door to the task registry (tasks/index.ts): activities and the CLI ask here which Task a
// campaign runs and what it provides, so nothing outside tasks/ names a task.
import { outerSettings, type OuterSettings } from '../core/loop-settings';
import type { CampaignSpec, TaskSpec } from '../core/spec';
import { summaryMetricsOf, type SummaryMetric, type Task } from '../core/task';
import { taskForSpec } from '../tasks/index';

/** The campaign spec's parser, its `task` block one of the registered tasks' (tasks/task-spec.ts). */
export { campaignSpecSchema, DEFAULT_TASK_KIND, parseSpec } from '../tasks/task-spec';

export { TASK_NAMES, exampleTasks, taskByName, taskForSpec, tasksWithTeacher } from '../tasks/index';

/** What every summary of the campaign's loops prints held-out before/after: its selection metric first. */
export function summaryMetricsOfSpec(spec: Pick<CampaignSpec, 'task' | 'selection'>): SummaryMetric[] {
  return summaryMetricsOf(spec.selection, taskForSpec(spec.task));
}

/**
 * The outer loop's settings of a spec, the gate's `clusterBy` filled from its task when the spec leaves it out (the
 * task's `itemClusters`; `item` for a task that declares none): the settings the workflow carries and every decision
 * records.
 */
export function outerSettingsOfSpec(spec: CampaignSpec): OuterSettings {
  const settings = outerSettings(spec);
  const clusterBy = settings.gate.clusterBy ?? taskForSpec(spec.task).itemClusters ?? 'item';
  return { ...settings, gate: { ...settings.gate, clusterBy } };
}

/** Folders holding the task's eval sources, hidden from every trainer (`repo`: the checkout the worker runs from). */
export function hiddenTaskSources(task: TaskSpec, repo: string): string[] {
  return taskForSpec(task).hiddenSources?.(repo) ?? [];
}

export type { Task };
