// The current activity, and heartbeats from anywhere in an activity's code. Called outside an activity (a test
// calling the function directly), they do nothing.
import { Context } from '@temporalio/activity';

/** The activity this code runs in, or undefined outside one. */
export function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** The progress each running activity last reported, re-sent by the automatic heartbeat (auto-heartbeat.ts). */
const lastDetails = new WeakMap<Context, unknown>();

/** A heartbeat with progress details between slow steps (model calls); the details stay until the next report. */
export function heartbeatIfActivity(details?: unknown): void {
  const ctx = currentActivity();
  if (!ctx) return;
  lastDetails.set(ctx, details);
  ctx.heartbeat(details);
}

/** The details `ctx` last reported through heartbeatIfActivity (undefined if none). */
export function lastHeartbeatDetails(ctx: Context): unknown {
  return lastDetails.get(ctx);
}

/** The current activity's attempt (1 on the first), or 1 outside an activity. */
export function activityAttempt(): number {
  return currentActivity()?.info.attempt ?? 1;
}
