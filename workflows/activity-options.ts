// Timeouts and retry rules per activity family. Heartbeat timeouts bound how long a crashed worker's
// activity waits before a retry reattaches elsewhere. No list of non-retryable error types: an activity whose error
// class says retrying cannot help fails as non-retryable itself (activities/retry-boundary.ts).
import type { ActivityOptions, LocalActivityOptions, RetryPolicy } from '@temporalio/workflow';

const retry: RetryPolicy = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' };

/**
 * Orchestration and launch activities are short steps; they heartbeat while they run (activities/auto-heartbeat.ts),
 * so a worker killed in one, or a completion Temporal lost while restarting, is retried after 30 s, not 2 minutes.
 * Long enough for a step that keeps the event loop busy for a while (hashing a dataset version).
 */
const STEP_HEARTBEAT = '30 seconds';

export function orchestrationOptions(taskQueue: string): ActivityOptions {
  return { taskQueue, startToCloseTimeout: '2 minutes', heartbeatTimeout: STEP_HEARTBEAT, retry: { ...retry, maximumAttempts: 10 } };
}

export function launchOptions(taskQueue: string): ActivityOptions {
  return { taskQueue, startToCloseTimeout: '2 minutes', heartbeatTimeout: STEP_HEARTBEAT, retry: { ...retry, maximumAttempts: 10 } };
}

export function awaitOptions(taskQueue: string, trainingTimeoutSeconds: number): ActivityOptions {
  return {
    taskQueue,
    // The trainer's own limit is enforced inside the activity; this one only bounds a stuck activity.
    startToCloseTimeout: `${trainingTimeoutSeconds + 600} seconds`,
    heartbeatTimeout: '10 seconds',
    cancellationType: 'WAIT_CANCELLATION_COMPLETED',
    retry: { ...retry, maximumAttempts: 20 },
  };
}

/**
 * acquireCapacity waits inside the activity for as long as the slots are taken: the heartbeat timeout, not the
 * start-to-close one, notices a crashed worker. It finishes its cancellation before the workflow moves on, so the
 * release that follows never runs before a grant it should free.
 */
export function capacityOptions(taskQueue: string): ActivityOptions {
  return {
    taskQueue,
    startToCloseTimeout: '7 days',
    heartbeatTimeout: '10 seconds',
    cancellationType: 'WAIT_CANCELLATION_COMPLETED',
    retry: { ...retry, maximumAttempts: 20 },
  };
}

/**
 * runTraining holds one training attempt from its slot's wait to the job's end: the slot wait's bound plus the
 * trainer's limit (enforced inside the activity; this one only bounds a stuck activity). Heartbeats notice a crash,
 * and the cancellation completes (the job killed, its verdict stored) before the workflow releases the slot.
 */
export function trainingOptions(taskQueue: string, trainingTimeoutSeconds: number): ActivityOptions {
  return { ...capacityOptions(taskQueue), startToCloseTimeout: `${7 * 24 * 3600 + trainingTimeoutSeconds + 600} seconds` };
}

/**
 * Bookkeeping that touches only PostgreSQL (finishExperiment) runs as a local activity on the workflow's own worker:
 * no task queue round trip and no workflow task of its own. A worker lost in one fails the workflow task, and the
 * next worker runs the (idempotent) step again.
 */
export function bookkeepingOptions(): LocalActivityOptions {
  return { startToCloseTimeout: '2 minutes', localRetryThreshold: '10 seconds', retry: { ...retry, maximumAttempts: 10 } };
}

export function evalOptions(taskQueue: string): ActivityOptions {
  return { taskQueue, startToCloseTimeout: '10 minutes', heartbeatTimeout: '60 seconds', retry: { ...retry, maximumAttempts: 5 } };
}

/**
 * Agent activities (proposeExperiments, analyzeBatch) wait on a model's reply: they heartbeat while a request is in
 * flight, so a cancelled loop reaches them within seconds and aborts the HTTP request, and a 429 or 5xx is retried
 * here with backoff (the SDK's own retries are off).
 */
export function agentOptions(taskQueue: string): ActivityOptions {
  return { taskQueue, startToCloseTimeout: '5 minutes', heartbeatTimeout: '10 seconds', retry: { ...retry, maximumAttempts: 10 } };
}
