// The hybrid proposer's batch: the agent's proposals (checked, repaired once) with near-duplicates of the history
// dropped, ranked by the built-in TPE model of the same history before any GPU time is spent, and the batch filled
// by the built-in sampler. Whether the agent leads or only competes is decided from the loop's recorded batches.
import { AgentRequestError, AgentUnavailableError, TokenBudgetExceededError } from '../../agents/agent-errors';
import type { AgentCaller } from '../../agents/agent-request';
import { proposeWithAgent } from '../../agents/proposer';
import { spaceKey } from '../../agents/proposer-reply';
import { BudgetExceededError } from '../../core/errors';
import type { Trial } from '../../core/sampler';
import { hybridBatch, type Candidate } from '../../core/sampler/hybrid-batch';
import { nextProposerMode } from '../../core/sampler/hybrid-mode';
import type { CampaignSpec, Params } from '../../core/spec';
import { recordProposalBatch } from '../../services/inner-loops';
import type { ActivityDeps } from '../deps';
import { activityAttempt, heartbeatIfActivity } from '../heartbeat';
import { pastBatches, proposerContext, type ExperimentRow } from './proposer-context';

/** Attempts of the propose activity that may fail on an unreachable or failing endpoint before the sampler takes over. */
export const AGENT_ATTEMPTS = 3;

export type BatchEntry = Candidate;

export interface AgentBatchInput {
  spec: CampaignSpec;
  innerLoopId: string;
  startIndex: number;
  count: number;
  /** The loop's experiments before this batch, oldest first. */
  rows: ExperimentRow[];
  history: Trial[];
  /** The built-in sampler's batch (already pinned), to fill with or compete against. */
  builtin: BatchEntry[];
  pin: (p: Params) => Params;
  agent: AgentCaller;
  model: string;
}

export async function agentBatch(deps: ActivityDeps, input: AgentBatchInput): Promise<BatchEntry[]> {
  const { spec, count } = input;
  const decided = nextProposerMode(await pastBatches(deps.db, input.innerLoopId, spec), spec.agents.handOverAfter);
  const notes = [decided.why];

  let agentEntries: BatchEntry[] = [];
  try {
    const context = await proposerContext(deps.db, spec, input.innerLoopId, input.rows, count);
    heartbeatIfActivity({ phase: 'asking the proposer' });
    const seen = new Set(input.rows.map((r) => spaceKey(spec.searchSpace, r.params)));
    const made = await proposeWithAgent(input.agent, input.model, context, seen);
    if (made.rejected.length > 0) notes.push(`rejected: ${made.rejected.join(' | ')}`);
    agentEntries = made.accepted.map((a) => ({ params: input.pin(a.params), hypothesis: a.hypothesis, proposer: 'agent' }));
  } catch (e) {
    const giveUp =
      e instanceof TokenBudgetExceededError ||
      e instanceof BudgetExceededError ||
      e instanceof AgentRequestError ||
      (e instanceof AgentUnavailableError && activityAttempt() >= AGENT_ATTEMPTS);
    if (!giveUp) throw e;
    notes.push(`no agent proposals: ${(e as Error).message}`);
  }

  const chosen = hybridBatch({
    mode: decided.mode,
    space: spec.searchSpace,
    history: input.history,
    agent: agentEntries,
    builtin: input.builtin,
    count,
    tol: spec.agents.nearDuplicate,
  });
  notes.push(...chosen.notes);

  await recordProposalBatch(deps.db, {
    id: `${input.innerLoopId}/b${input.startIndex}`,
    innerLoopId: input.innerLoopId,
    startIndex: input.startIndex,
    mode: decided.mode,
    note: notes.join('. '),
  });
  return chosen.batch;
}
