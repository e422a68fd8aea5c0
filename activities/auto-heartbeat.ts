// Short activities heartbeat on their own while they run, so that a worker killed in the middle of one (or a
// completion lost while Temporal restarts) is noticed within the heartbeat timeout (seconds) instead of the
// start-to-close one (minutes). Activities that heartbeat progress details themselves (awaitTraining's resume point)
// are not wrapped: an empty heartbeat would overwrite their details.
import { Context } from '@temporalio/activity';

/** `fn`, heartbeating every third of the activity's heartbeat timeout while it runs; outside an activity, `fn` itself. */
export function withAutoHeartbeat<I, O>(fn: (input: I) => Promise<O>): (input: I) => Promise<O> {
  return async (input) => {
    let ctx: Context | undefined;
    try {
      ctx = Context.current();
    } catch {
      ctx = undefined;
    }
    const timeoutMs = ctx?.info.heartbeatTimeoutMs;
    if (!ctx || !timeoutMs) return fn(input);
    const active = ctx;
    const beat = setInterval(() => active.heartbeat(), Math.max(1_000, Math.floor(timeoutMs / 3)));
    try {
      return await fn(input);
    } finally {
      clearInterval(beat);
    }
  };
}

/** Every function of `activities` wrapped by withAutoHeartbeat. */
export function autoHeartbeatAll<T extends object>(activities: T): T {
  return Object.fromEntries(Object.entries(activities).map(([name, fn]) => [name, withAutoHeartbeat(fn as (i: unknown) => Promise<unknown>)])) as T;
}
