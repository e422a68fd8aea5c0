// Each loop's first step: check what was typed (the Temporal UI, `temporal workflow start`) and turn a campaign name
// or a spec into the version id the loop carries. A bad input fails the workflow with one line (InvalidLoopInput,
// not retried); an input that already holds a version id goes through without an await or a command, so every
// execution started before this step existed replays unchanged.
import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { OrchestrationActivities } from '../contracts/activities';
import type { InnerLoopInput, InnerLoopStart } from '../contracts/inner-loop';
import { INVALID_LOOP_INPUT, innerLoopInputProblem, outerLoopInputProblem, type CampaignRef } from '../contracts/loop-input';
import type { OuterLoopInput, OuterLoopStart } from '../contracts/outer-loop';
import { orchestrationOptions } from './activity-options';
import { queueOf } from './queues';

async function versionOf(ref: CampaignRef): Promise<string> {
  const { resolveCampaignVersion } = proxyActivities<OrchestrationActivities>(orchestrationOptions(queueOf('orchestration')));
  try {
    return (await resolveCampaignVersion(ref)).campaignVersionId;
  } catch (e) {
    // The activity's own line (an unknown campaign, a spec that does not validate) as the workflow's failure, so the
    // Temporal UI shows it at the top rather than "activity task failed".
    const cause = e instanceof ActivityFailure && e.cause instanceof ApplicationFailure ? e.cause : undefined;
    if (cause?.nonRetryable) throw ApplicationFailure.nonRetryable(cause.message, cause.type ?? INVALID_LOOP_INPUT);
    throw e;
  }
}

/** The inner loop's input with its version id, from a version id, a campaign's name (newest version) or a spec. */
export async function innerLoopInputOf(given: InnerLoopStart): Promise<InnerLoopInput> {
  const problem = innerLoopInputProblem(given);
  if (problem) throw ApplicationFailure.nonRetryable(problem, INVALID_LOOP_INPUT);
  const { campaignId, spec, campaignVersionId, ...rest } = given;
  if (campaignVersionId !== undefined && spec === undefined) return { ...rest, campaignVersionId };
  return { ...rest, campaignVersionId: await versionOf({ campaignId, spec }) };
}

/** The outer loop's input; a spec is registered, and its version pinned for every iteration of this run. */
export async function outerLoopInputOf(given: OuterLoopStart): Promise<OuterLoopInput> {
  const problem = outerLoopInputProblem(given);
  if (problem) throw ApplicationFailure.nonRetryable(problem, INVALID_LOOP_INPUT);
  const { spec, campaignId, ...rest } = given;
  if (spec === undefined) return { ...rest, campaignId: campaignId! };
  const campaignVersionId = await versionOf({ spec });
  return { ...rest, campaignId: campaignId ?? (spec as { name: string }).name, campaignVersionId };
}
