// claimOuterIteration: the outer loop's first step. Under a per-campaign lock it either resumes the attempt this
// workflow run already owns, skips (another live workflow is mid-iteration, or too little new feedback arrived),
// starts a new attempt of an iteration whose last attempt failed or whose owner is gone (ending that attempt's row
// with the reason first), or opens the next iteration and claims every feedback event not yet ingested: its
// watermark. A schedule fire and a manual trigger for the same window therefore make one iteration, not two. A new
// attempt has ids of its own (`…/i2-a2`, its inner loop, experiments and run directories), so nothing a failed
// attempt left behind (a failed inner loop, run directories holding exit codes) is reused, and it takes over the
// feedback its predecessor ingested. Each attempt pins the campaign version it runs: the outer loop's own, else the
// campaign's latest at the claim; a resumed claim keeps the attempt's.
import { outerIterationIdOf, type FailedIterationSummary } from '../../contracts/outer-loop';
import type { OuterSettings } from '../../core/loop-settings';
import { outerSettingsOfSpec } from '../../services/task-registry';
import type { CampaignSpec } from '../../core/spec';
import { campaignIdOfVersion } from '../../contracts/campaign';
import { NotFoundError } from '../../core/errors';
import { latestCampaignVersionId } from '../../services/campaigns/campaign-versions';
import { moveFeedbackCritiques } from '../../services/critiques';
import { ingestPendingFeedback, moveIngestedFeedback, pendingFeedbackCount } from '../../services/feedback-events';
import {
  endIterationFailed,
  latestIteration,
  lockIterationClaims,
  recordIteration,
  runningIteration,
  type NewOuterIteration,
  type OuterIteration,
} from '../../services/outer-iterations';
import type { Queryable } from '../../services/queryable';
import { productionCheckpointOf } from '../../services/production-model';

import { campaignsOf, type ActivityDeps } from '../deps';
import type { ClaimIterationInput, ClaimIterationResult } from '../../contracts/outer-activities';

export async function claimOuterIteration(deps: ActivityDeps, input: ClaimIterationInput): Promise<ClaimIterationResult> {
  const versionId = input.campaignVersionId ?? (await latestCampaignVersionId(deps.db, input.campaignId));
  if (!versionId) throw new NotFoundError(`campaign "${input.campaignId}" does not exist (run \`flywheel run SPEC\` first)`);
  if (campaignIdOfVersion(versionId) !== input.campaignId)
    throw new NotFoundError(`"${versionId}" is not a version of campaign "${input.campaignId}"`);
  const spec = await campaignsOf(deps).resolve(versionId);
  // Asked outside the transaction: a Temporal round trip must not hold the lock.
  const open = await runningIteration(deps.db, input.campaignId);
  const ownerGone = open && !ownsAttempt(open, input) ? await ownerEnded(deps, open) : undefined;

  return deps.db.transaction((tx) => claimUnderLock(deps, tx, input, { versionId, spec, open, ownerGone }));
}

/** What the claim learnt before taking the lock. */
interface Claim {
  /** The campaign version a new attempt pins. */
  versionId: string;
  spec: CampaignSpec;
  /** The attempt that was running, if any, and how its owner ended (undefined: alive, or the claimer's own). */
  open: { id: string } | undefined;
  ownerGone: string | undefined;
}

/** The claim's decision, inside the transaction that holds the campaign's claim lock (`tx`). */
async function claimUnderLock(deps: ActivityDeps, tx: Queryable, input: ClaimIterationInput, claim: Claim): Promise<ClaimIterationResult> {
  const { open, ownerGone } = claim;
  await lockIterationClaims(tx, input.campaignId);
  const latest = await latestIteration(tx, input.campaignId);
  const production = (await productionCheckpointOf(tx, input.campaignId)) ?? null;
  const settings = outerSettingsOfSpec(claim.spec);

  if (latest?.status === 'running') {
    if (ownsAttempt(latest, input)) return resumeAttempt(deps, latest, claim.versionId, settings);
    // End only the very attempt whose owner was found gone above; an owner that claimed since is alive by definition.
    if (ownerGone === undefined || open?.id !== latest.id) {
      return {
        claimed: false as const,
        reason: `iteration ${latest.iteration} of "${input.campaignId}" is in progress in workflow ${latest.workflowId}`,
      };
    }
    await endIterationFailed(tx, latest.id, failedSummary(latest, ownerGone));
    latest.status = 'failed';
    latest.summary = failedSummary(latest, ownerGone);
  }

  const next = { versionId: claim.versionId, production, settings };
  if (latest?.status === 'failed') return startNewAttempt(tx, input, latest, next);
  return openNextIteration(tx, input, claim.spec, latest, next);
}

/** The new attempt's campaign version, incumbent and settings. */
interface NextAttempt {
  versionId: string;
  production: string | null;
  settings: OuterSettings;
}

/** This run's own attempt (a retried claim): resumed, on the version it pinned. */
async function resumeAttempt(
  deps: ActivityDeps,
  latest: OuterIteration,
  versionId: string,
  settings: OuterSettings,
): Promise<ClaimIterationResult> {
  const pinned = latest.campaignVersionId ?? versionId;
  const own = pinned === versionId ? settings : outerSettingsOfSpec(await campaignsOf(deps).resolve(pinned));
  return {
    claimed: true as const,
    outerIterationId: latest.id,
    iteration: latest.iteration,
    attempt: latest.attempt,
    incumbentCheckpointId: latest.incumbentCheckpointId,
    newFeedback: latest.newFeedback,
    campaignVersionId: pinned,
    settings: own,
  };
}

/** A running attempt's row: who runs it, on which version, against which incumbent, and the feedback it ingested. */
function recordRunning(
  tx: Queryable,
  input: ClaimIterationInput,
  { versionId, production }: NextAttempt,
  row: Pick<NewOuterIteration, 'id' | 'iteration' | 'attempt' | 'newFeedback' | 'feedbackFrom' | 'feedbackTo'>,
): Promise<void> {
  return recordIteration(tx, {
    ...row,
    campaignId: input.campaignId,
    workflowId: input.workflowId,
    workflowRunId: input.runId ?? null,
    trigger: input.trigger,
    campaignVersionId: versionId,
    status: 'running',
    incumbentCheckpointId: production,
  });
}

/** The failed iteration again, as a new attempt with its own ids; it ingests what the failed attempt had ingested. */
async function startNewAttempt(
  tx: Queryable,
  input: ClaimIterationInput,
  latest: OuterIteration,
  next: NextAttempt,
): Promise<ClaimIterationResult> {
  const { versionId, production, settings } = next;
  const attempt = latest.attempt + 1;
  const id = outerIterationIdOf(input.campaignId, latest.iteration, attempt);
  await moveIngestedFeedback(tx, latest.id, id);
  // A feedback critique is keyed by its event, so it is the new attempt's too (never critiqued twice).
  await moveFeedbackCritiques(tx, latest.id, id);
  await recordRunning(tx, input, next, {
    id,
    iteration: latest.iteration,
    attempt,
    newFeedback: latest.newFeedback,
    feedbackFrom: latest.feedbackFrom,
    feedbackTo: latest.feedbackTo,
  });
  const reason = latest.summary?.reason ?? 'it failed';
  return {
    claimed: true as const,
    outerIterationId: id,
    iteration: latest.iteration,
    attempt,
    incumbentCheckpointId: production,
    newFeedback: latest.newFeedback,
    replaces: { outerIterationId: latest.id, reason },
    campaignVersionId: versionId,
    settings,
  };
}

/** The next iteration, claiming every feedback event not yet ingested; skipped while too little new feedback arrived. */
async function openNextIteration(
  tx: Queryable,
  input: ClaimIterationInput,
  spec: CampaignSpec,
  latest: OuterIteration | undefined,
  next: NextAttempt,
): Promise<ClaimIterationResult> {
  const { versionId, production, settings } = next;
  const n = await pendingFeedbackCount(tx, input.campaignId);
  const min = spec.outerLoop.minNewFeedback;
  if (production && n < min) {
    return {
      claimed: false as const,
      reason: `only ${n} new feedback event${n === 1 ? '' : 's'} since the last iteration (outerLoop.minNewFeedback is ${min})`,
    };
  }
  const iteration = (latest?.iteration ?? 0) + 1;
  const id = outerIterationIdOf(input.campaignId, iteration);
  const span = await ingestPendingFeedback(tx, input.campaignId, id);
  await recordRunning(tx, input, next, { id, iteration, newFeedback: span.n, feedbackFrom: span.from, feedbackTo: span.to });
  return {
    claimed: true as const,
    outerIterationId: id,
    iteration,
    attempt: 1,
    incumbentCheckpointId: production,
    newFeedback: span.n,
    campaignVersionId: versionId,
    settings,
  };
}

interface Owner {
  workflowId: string;
  workflowRunId: string | null;
}

/** Whether the claiming run is the attempt's owner: the same workflow and, when both are known, the same run. */
function ownsAttempt(owner: Owner, input: ClaimIterationInput): boolean {
  return (
    owner.workflowId === input.workflowId &&
    (owner.workflowRunId === null || input.runId === undefined || owner.workflowRunId === input.runId)
  );
}

/**
 * How the attempt's owner run ended (`TERMINATED`, `FAILED`, …), or undefined while it runs. Unknown (no Temporal
 * client injected) counts as alive: skipping is safe, running an iteration twice is not.
 */
async function ownerEnded(deps: ActivityDeps, owner: Owner): Promise<string | undefined> {
  if (deps.workflowStatus) {
    const status = await deps.workflowStatus(owner.workflowId, owner.workflowRunId ?? undefined);
    return status === 'RUNNING' ? undefined : status;
  }
  if (!deps.isWorkflowRunning) return undefined;
  return (await deps.isWorkflowRunning(owner.workflowId)) ? undefined : 'ENDED';
}

function failedSummary(
  row: { id: string; iteration: number; attempt: number; workflowId: string; newFeedback: number },
  how: string,
): FailedIterationSummary {
  const ended =
    how === 'ENDED' ? 'is no longer running' : how === 'NOT_FOUND' ? 'no longer exists' : `ended ${how.toLowerCase().replace(/_/g, ' ')}`;
  return {
    outerIterationId: row.id,
    iteration: row.iteration,
    attempt: row.attempt,
    status: 'failed',
    reason: `its workflow ${row.workflowId} ${ended} before the iteration finished`,
    newFeedback: row.newFeedback,
    critiques: 0,
  };
}
