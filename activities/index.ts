// The activities of each task-queue family, built from their dependencies.
import type { QueueFamily } from '../core/queues';
import type { ActivityDeps } from './deps';

export type { ActivityDeps } from './deps';

export function createActivities(_deps: ActivityDeps): Record<QueueFamily, Record<string, (...args: never[]) => unknown>> {
  return { orchestration: {}, training: {}, eval: {} };
}
