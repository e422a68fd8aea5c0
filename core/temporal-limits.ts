// Temporal's per-execution limits that a campaign's settings can run into (the server's defaults; docs/scale.md).

/**
 * Child workflows one execution may have pending at once (`limit.numPendingChildExecutions.error`): past it the inner
 * loop's workflow task fails on every retry. An inner loop runs one child per experiment in flight, plus the baseline.
 */
export const PENDING_CHILDREN_LIMIT = 2000;

/** The most experiments one inner loop runs at once: every one is a pending child, and the baseline is one more. */
export const MAX_PARALLELISM = PENDING_CHILDREN_LIMIT - 1;

/** Temporal ends an execution whose history passes this many events (`limit.historyCount.error`). */
export const HISTORY_COUNT_LIMIT = 51_200;

/** The inner loop continues as new, between batches, past this many history events (even before the server suggests it). */
export const LOOP_HISTORY_EVENTS_LIMIT = 8000;

/**
 * The history events one inline experiment (innerLoop.experimentWorkflows) adds to its loop's history, counted high:
 * per training attempt its activity's three and a workflow task's three; public scoring's six; the bookkeeping
 * marker, a patch marker and an approval update's two, with a little to spare. Only a workflow task that fails or
 * times out (a worker killed mid-task) adds more, for which maxInlineBatch keeps a fifth of the limit spare. The recorded loop with two attempts allowed
 * (test/histories/inner-loop-inline.json) has 171 events in all for 7 experiments and the loop's own steps.
 */
export function inlineExperimentEvents(maxTrainingAttempts: number): number {
  return 6 * maxTrainingAttempts + 13;
}

/**
 * The largest batch whose experiments may run inline: the loop continues as new only between batches, so one batch's
 * events, on top of a history just under LOOP_HISTORY_EVENTS_LIMIT, must stay under Temporal's limit with a fifth spare.
 */
export function maxInlineBatch(maxTrainingAttempts: number): number {
  return Math.floor((0.8 * HISTORY_COUNT_LIMIT - LOOP_HISTORY_EVENTS_LIMIT) / inlineExperimentEvents(maxTrainingAttempts));
}
