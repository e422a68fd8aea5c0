// Task queues as seen from workflow code: the child's queue names follow the parent's own queue prefix.
import { workflowInfo } from '@temporalio/workflow';
import { taskQueue, type QueueFamily } from '../contracts/queues';

/** `flywheel-orchestration` → `flywheel`: lets tests run isolated stacks of queues on one server. */
export function queuePrefix(): string {
  return workflowInfo().taskQueue.replace(/-orchestration$/, '');
}

export const queueOf = (family: QueueFamily) => taskQueue(family, queuePrefix());
