// analyzeBatch: after each batch, a plain-English account stored in `analyses` (shown by `flywheel status`, read by
// reports and by the proposer's next request). The analyst model writes it when the spec names one and the worker
// has an endpoint; otherwise, or when its reply is unusable, it is derived from the numbers and says so.
import { AgentRequestError, AgentUnavailableError, TokenBudgetExceededError, UnusableReplyError } from '../../agents/agent-errors';
import { ANALYST_PROMPT_VERSION, analyzeWithAgent } from '../../agents/analyst';
import { BudgetExceededError } from '../../core/errors';
import { improves } from '../../core/loop-settings';
import type { CampaignSpec } from '../../core/spec';
import { analysisById, loopExperiments, recordAnalysis, type ExperimentRow } from '../../services/inner-loops';
import { agentCallerFor } from '../agents/agent-caller';

import { campaignsOf, type ActivityDeps } from '../deps';
import { activityAttempt } from '../heartbeat';
import { AGENT_ATTEMPTS } from './agent-batch';
import { agentViewOf } from './proposer-context';
import type { AnalyzeBatchInput } from '../../contracts/inner-activities';

export const BUILTIN_ANALYST_VERSION = 'analyst-builtin-v1';

export const analysisIdOf = (innerLoopId: string, startIndex: number) => `${innerLoopId}/a${startIndex}`;

type Row = ExperimentRow;

export async function analyzeBatch(deps: ActivityDeps, input: AnalyzeBatchInput): Promise<{ analysisId: string; author: string }> {
  const id = analysisIdOf(input.innerLoopId, input.startIndex);
  const done = await analysisById(deps.db, id);
  if (done) return { analysisId: id, author: done.author };

  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  const rows = await loopExperiments(deps.db, input.innerLoopId, { from: 0, to: input.startIndex + input.count });
  const before = rows.filter((r) => r.index < input.startIndex);
  const batch = rows.filter((r) => r.index >= input.startIndex);
  const bestBefore = bestOf(before, spec);

  let author = 'builtin';
  let promptVersion = BUILTIN_ANALYST_VERSION;
  let callId: string | null = null;
  let text = builtinAccount(batch, bestBefore, spec);
  const model = spec.agents.analyst.model;
  const agent = model ? agentCallerFor(deps.db, spec, deps.agentEnv ?? process.env) : undefined;
  if (model && agent) {
    const board = [...before, ...batch]
      .filter((r) => r.publicScore !== null)
      .sort((a, b) => (spec.selection.mode === 'min' ? 1 : -1) * (a.publicScore! - b.publicScore!));
    try {
      const made = await analyzeWithAgent(agent, model, {
        goal: spec.goal,
        metric: spec.selection.metric,
        mode: spec.selection.mode,
        batch: batch.map(agentViewOf),
        bestBefore: bestBefore ? agentViewOf(bestBefore) : null,
        leaderboard: board.slice(0, 10).map(agentViewOf),
      });
      ({ text, callId } = made);
      author = model;
      promptVersion = ANALYST_PROMPT_VERSION;
    } catch (e) {
      const fallBack =
        e instanceof UnusableReplyError ||
        e instanceof TokenBudgetExceededError ||
        e instanceof BudgetExceededError ||
        e instanceof AgentRequestError ||
        (e instanceof AgentUnavailableError && activityAttempt() >= AGENT_ATTEMPTS);
      if (!fallBack) throw e;
      text = `The analyst model could not write this account (${(e as Error).message}); derived from the numbers instead. ${text}`;
    }
  }
  await recordAnalysis(deps.db, {
    id,
    campaignId: input.campaignId,
    innerLoopId: input.innerLoopId,
    startIndex: input.startIndex,
    author,
    promptVersion,
    text,
    callId,
  });
  return { analysisId: id, author };
}

function bestOf(rows: Row[], spec: CampaignSpec): Row | undefined {
  let best: Row | undefined;
  for (const r of rows)
    if (r.publicScore !== null && improves(r.publicScore, best?.publicScore ?? undefined, spec.selection.mode)) best = r;
  return best;
}

/** The account from the numbers alone: the batch's best against the best before it, and what failed. */
export function builtinAccount(batch: Row[], bestBefore: Row | undefined, spec: CampaignSpec): string {
  const { metric, mode } = spec.selection;
  if (batch.length === 0) return 'The batch was empty.';
  const range = `e${batch[0].index}–e${batch[batch.length - 1].index}`;
  const by = [...new Set(batch.map((r) => r.proposer))].join(', ');
  const best = bestOf(batch, spec);
  const failed = batch.filter((r) => r.publicScore === null).map((r) => `e${r.index} ${r.status}`);
  const parts = [`Batch ${range} (${batch.length} experiments, proposed by ${by}).`];
  if (!best) parts.push(`No experiment finished with a public ${metric}.`);
  else {
    const knobs = Object.entries(best.params)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(', ');
    parts.push(`Best: e${best.index} with public ${metric} ${best.publicScore!.toFixed(4)} (${knobs}).`);
    if (!bestBefore) parts.push('It is the first score of the loop.');
    else if (improves(best.publicScore!, bestBefore.publicScore!, mode))
      parts.push(
        `It improves on the best before the batch, e${bestBefore.index} at ${bestBefore.publicScore!.toFixed(4)}, by ${Math.abs(best.publicScore! - bestBefore.publicScore!).toFixed(4)}.`,
      );
    else parts.push(`It does not beat the best before the batch, e${bestBefore.index} at ${bestBefore.publicScore!.toFixed(4)}.`);
  }
  if (failed.length > 0) parts.push(`Without a score: ${failed.join(', ')}.`);
  return parts.join(' ');
}
