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
