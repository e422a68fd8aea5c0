// Shared by `run`, `status` and `demo`: follow a loop to its end (or a detach) and print the outcome.
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { defaultSteps } from '../core/trainer-defaults';
import type { CampaignSpec } from '../core/spec';
import type { InnerLoopResult } from '../contracts/inner-loop';
import { endReason } from '../services/loop-failures';
import { summaryMetricsOfSpec } from '../services/task-registry';
import { LoopFailedError } from './errors';
import { formatResult } from './print-result';
import { noSuccessReason } from './no-success';
import { loopExperiments } from '../services/inner-loops';
import type { Session } from './session';
import { watchLoop } from './watch';

export async function followLoop(
  s: Session,
  handle: WorkflowHandle,
  spec: CampaignSpec,
  json: boolean,
  detach: Promise<void>,
): Promise<InnerLoopResult | undefined> {
  const campaignId = spec.name;
  const outcome = await watchLoop(handle, s.db, {
    metric: spec.selection.metric,
    defaultSteps: runSteps(spec),
    detach,
    out: json ? (process.stderr as NodeJS.WriteStream) : process.stdout,
  }).catch(async (e: unknown) => {
    if (!(e instanceof WorkflowFailedError)) throw e;
    const status = (await handle.describe().catch(() => undefined))?.status.name ?? 'FAILED';
    throw new LoopFailedError(`${handle.workflowId} ended ${status}: ${endReason(e)}`);
  });
  if (outcome.kind === 'detached') {
    console.error(`\ndetached: ${handle.workflowId} keeps running; reattach with \`flywheel status ${campaignId}\``);
    return undefined;
  }
  console.log(json ? JSON.stringify(outcome.result, null, 2) : formatResult(outcome.result, summaryMetricsOfSpec(spec)));
  // A search in which nothing succeeded is a failure of the run, with its reason, not exit 0 over an empty summary.
  if (!outcome.result.best && outcome.result.experiments > 0)
    throw new LoopFailedError(noSuccessReason(handle.workflowId, await loopExperiments(s.db, outcome.result.innerLoopId)));
  return outcome.result;
}

/** How long a run is when its params do not say: the spec's fixed `steps`, else the trainer's default (0: unknown). */
export function runSteps(spec: CampaignSpec): number {
  const fixed = Number(spec.trainer.fixed.steps);
  if (Number.isFinite(fixed) && fixed > 0) return fixed;
  return defaultSteps(spec.trainer.command);
}
