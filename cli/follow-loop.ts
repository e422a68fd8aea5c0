// Shared by `run`, `status` and `demo`: follow a loop to its end (or a detach) and print the outcome.
import type { WorkflowHandle } from '@temporalio/client';
import type { InnerLoopResult } from '../workflows/inner-loop-api';
import { formatResult } from './print-result';
import type { Session } from './session';
import { watchLoop } from './watch';

export async function followLoop(s: Session, handle: WorkflowHandle, campaignId: string, metric: string, json: boolean): Promise<InnerLoopResult | undefined> {
  const outcome = await watchLoop(handle, s.db, { metric, out: json ? (process.stderr as NodeJS.WriteStream) : process.stdout });
  if (outcome.kind === 'detached') {
    console.error(`\ndetached: ${handle.workflowId} keeps running; reattach with \`flywheel status ${campaignId}\``);
    return undefined;
  }
  console.log(json ? JSON.stringify(outcome.result, null, 2) : formatResult(outcome.result));
  return outcome.result;
}
