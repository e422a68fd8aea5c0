// Temporal's per-execution limits that a campaign's settings can run into (the server's defaults; docs/scale.md).

/**
 * Child workflows one execution may have pending at once (`limit.numPendingChildExecutions.error`): past it the inner
 * loop's workflow task fails on every retry. An inner loop runs one child per experiment in flight, plus the baseline.
 */
export const PENDING_CHILDREN_LIMIT = 2000;

/** The most experiments one inner loop runs at once: every one is a pending child, and the baseline is one more. */
export const MAX_PARALLELISM = PENDING_CHILDREN_LIMIT - 1;
