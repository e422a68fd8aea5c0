// Short activities heartbeat on their own while they run, so that a worker killed in the middle of one (or a
// completion lost while Temporal restarts) is noticed within the heartbeat timeout (seconds) instead of the
// start-to-close one (minutes). Activities that heartbeat progress details themselves (awaitTraining's resume point)
// are not wrapped. Progress an activity reports through heartbeatIfActivity is re-sent, not overwritten.
import { currentActivity, lastHeartbeatDetails } from './heartbeat';

/** `fn`, heartbeating every third of the activity's heartbeat timeout while it runs; outside an activity, `fn` itself. */
export function withAutoHeartbeat<I, O>(fn: (input: I) => Promise<O>): (input: I) => Promise<O> {
  return async (input) => {
    const ctx = currentActivity();
    const timeoutMs = ctx?.info.heartbeatTimeoutMs;
    if (!ctx || !timeoutMs) return fn(input);
    const beat = setInterval(() => ctx.heartbeat(lastHeartbeatDetails(ctx)), Math.max(1_000, Math.floor(timeoutMs / 3)));
    try {
      return await fn(input);
    } finally {
      clearInterval(beat);
    }
  };
}

/** Every function of `activities` wrapped by withAutoHeartbeat. */
export function autoHeartbeatAll<T extends object>(activities: T): T {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [name, withAutoHeartbeat(fn as (i: unknown) => Promise<unknown>)]),
  ) as T;
}
