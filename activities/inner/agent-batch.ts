// The hybrid proposer's batch: the agent's proposals (checked, repaired once) with near-duplicates of the history
// dropped, ranked by the built-in TPE model of the same history before any GPU time is spent, and the batch filled
// by the built-in sampler. Whether the agent leads or only competes is decided from the loop's recorded batches.
import { AgentRequestError, AgentUnavailableError, TokenBudgetExceededError } from '../../agents/agent-errors';
import type { AgentCaller } from '../../agents/agent-request';
import { proposeWithAgent, type PatchChecker, type RecipeView } from '../../agents/proposer';
import { spaceKey } from '../../agents/proposer-reply';
import { BudgetExceededError } from '../../core/errors';
import type { Trial } from '../../core/sampler';
import { hybridBatch, type Candidate } from '../../core/sampler/hybrid-batch';
import { nextProposerMode } from '../../core/sampler/hybrid-mode';
import type { CampaignSpec, Params } from '../../core/spec';
import { recordProposalBatch } from '../../services/inner-loops';
import type { ActivityDeps } from '../deps';
import { activityAttempt, heartbeatIfActivity } from '../heartbeat';
import { analystAnswerOf } from './analyst-views';
import { pastBatches, proposerContext, type ExperimentRow } from './proposer-context';

/** Attempts of the propose activity that may fail on an unreachable or failing endpoint before the sampler takes over. */
export const AGENT_ATTEMPTS = 3;

/** A batch's entry: a candidate, and on a campaign with a recipe the commit it runs and the patch that made it. */
export interface BatchEntry extends Candidate {
  /** The recipe commit the experiment runs (a patch's, a confirmation's); unset: the loop's best commit. */
  commit?: string;
  /** The recipe_patches id of the patch it runs (a researcher's queued one), written with the experiment. */
  patchId?: string;
}

/** The recipe side of an agent batch: what the proposer sees of it, and the checks its patches go through. */
export interface AgentRecipe {
  view: RecipeView;
  check: PatchChecker;
  /** Keep-or-revert's decisions and the researchers' patches, for the batch's note. */
  notes: string[];
}

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
  recipe?: AgentRecipe;
}

export async function agentBatch(deps: ActivityDeps, input: AgentBatchInput): Promise<BatchEntry[]> {
  const { spec, count } = input;
  const decided = nextProposerMode(await pastBatches(deps.db, input.innerLoopId, spec), spec.agents.handOverAfter);
  const notes = [decided.why, ...(input.recipe?.notes ?? [])];

  let agentEntries: BatchEntry[] = [];
  // Accepted patches lead the batch whatever the mode: their knobs may repeat the history's (other code), so neither
  // the near-duplicate rule nor the TPE ranking, which see knobs only, applies to them.
  let patchEntries: BatchEntry[] = [];
  try {
    const context = await proposerContext(deps.db, spec, input.innerLoopId, input.rows, count, input.recipe?.view);
    heartbeatIfActivity({ phase: 'asking the proposer' });
    const seen = new Set(input.rows.map((r) => spaceKey(spec.searchSpace, r.params)));
    // A recipe campaign's proposer may call the analyst tool (agents/analyst-tool.ts), answered from PostgreSQL.
    const analyst = input.recipe ? await analystAnswerOf(deps.db, spec, input.innerLoopId, input.rows) : undefined;
    const made = await proposeWithAgent(input.agent, input.model, context, seen, input.recipe?.check, analyst);
    if (made.rejected.length > 0) notes.push(`rejected: ${made.rejected.join(' | ')}`);
    const entry = (a: (typeof made.accepted)[number]): BatchEntry => ({
      params: input.pin(a.params),
      hypothesis: a.patch ? `${a.hypothesis} [patch ${a.patch.summary}]` : a.hypothesis,
      proposer: 'agent',
      ...(a.patch ? { commit: a.patch.commit } : {}),
    });
    patchEntries = made.accepted.filter((a) => a.patch).map(entry);
    agentEntries = made.accepted.filter((a) => !a.patch).map(entry);
  } catch (e) {
    const giveUp =
      e instanceof TokenBudgetExceededError ||
      e instanceof BudgetExceededError ||
      e instanceof AgentRequestError ||
      (e instanceof AgentUnavailableError && activityAttempt() >= AGENT_ATTEMPTS);
    if (!giveUp) throw e;
    notes.push(`no agent proposals: ${(e as Error).message}`);
  }

  const lead = patchEntries.slice(0, count);
  const chosen = hybridBatch({
    mode: decided.mode,
    space: spec.searchSpace,
    history: input.history,
    agent: agentEntries,
    builtin: input.builtin,
    count: count - lead.length,
    tol: spec.agents.nearDuplicate,
  });
  if (patchEntries.length > 0) notes.push(`${lead.length} patch experiments from the agent lead the batch`);
  notes.push(...chosen.notes);

  await recordProposalBatch(deps.db, {
    id: `${input.innerLoopId}/b${input.startIndex}`,
    innerLoopId: input.innerLoopId,
    startIndex: input.startIndex,
    mode: decided.mode,
    note: notes.join('. '),
  });
  return [...lead, ...chosen.batch];
}
