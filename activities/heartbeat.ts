// A heartbeat between slow steps (model calls), so a long critique step is not mistaken for a dead worker. Called
// outside an activity (a test calling the function directly), it does nothing.
import { Context } from '@temporalio/activity';

export function heartbeatIfActivity(details?: unknown): void {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return;
  }
  ctx.heartbeat(details);
}

/** The current activity's attempt (1 on the first), or 1 outside an activity. */
export function activityAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}
