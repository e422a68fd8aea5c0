// The task-queue families of the design. Each has its own worker process, so killing one leaves the others serving.
export const QUEUE_FAMILIES = ['orchestration', 'training', 'eval'] as const;
export type QueueFamily = (typeof QUEUE_FAMILIES)[number];

/** The Temporal task queue name of a family, under an optional prefix (tests use one per file). */
export function taskQueue(family: QueueFamily, prefix = 'flywheel'): string {
  return `${prefix}-${family}`;
}
