// The proposer as a chat model: asks for a batch of experiments, checks every proposal against the search space
// and the history, and asks once more with the reasons when something was rejected. What it returns is only ever
// valid, new configurations; the caller fills the rest of the batch with the built-in sampler.
import { UnusableReplyError } from './agent-errors';
import type { AgentCaller, AgentMessage } from './agent-request';
import { ANALYST_TOOL, answerAnalystCall, type AnalystAnswer } from './analyst-tool';
import { loadPrompt } from './load-prompt';
import { patchJsonSchema, patchReplySchema, type PatchReply } from './patch-reply';
import { checkProposals, proposerJsonSchema, proposerReplySchema, spaceKey } from './proposer-reply';
import { parseStructured } from './structured-reply';
import { completeWithTools, type ToolRounds } from './tool-rounds';
import { validateParams } from '../core/sampler';
import type { Params, SearchSpace } from '../core/spec';

export const PROPOSER_PROMPT_VERSION = 'proposer.v1';
/**
 * The prompt of a campaign with a recipe: the same role, patches to the recipe's mutable files beside knobs, and the
 * analyst tool (v2; v1 had the tool's summary in the user message only).
 */
export const PATCH_PROPOSER_PROMPT_VERSION = 'proposer-patch.v2';
/** Tool rounds (requests that answered analyst calls) one proposing activity allows, its repair included. */
export const MAX_TOOL_ROUNDS = 3;

/** What the proposer sees of the recipe: the best commit's mutable files, and every patch tried so far. */
export interface RecipeView {
  bestCommit: string;
  /** The knobs of the best experiment on that commit: what a patch proposed with `params: null` runs with. */
  bestParams: Params;
  mutable: string[];
  /** The mutable files of the best commit, path → text. */
  files: Record<string, string>;
  maxPatchBytes: number;
  /** Patches already tried (run, rejected, kept), so the model does not repeat them. */
  tried: { hash: string; summary: string; status: string; reason?: string | null }[];
}

export interface ProposerContext {
  goal: string;
  metric: string;
  mode: 'min' | 'max';
  searchSpace: SearchSpace;
  /** Public scores only: held-out scores never enter an agent's context. */
  leaderboard: unknown[];
  analyses: string[];
  count: number;
  /** Only when the campaign has a recipe (trainer.recipe). */
  recipe?: RecipeView;
  /** The analyst's structured view of the loop (best so far, plateau, what each kind of change did), when asked. */
  analyst?: unknown;
}

/** The recipe's checks on a proposed diff (services/recipes checkPatch), bound by the caller. */
export type PatchVerdict = { ok: true; commit: string; summary: string; hash: string } | { ok: false; reason: string };
export type PatchChecker = (diff: string, hypothesis: string) => Promise<PatchVerdict>;

/** An accepted proposal: knob values, a checked patch (its commit), or both. */
export interface AgentProposal {
  /** A patch proposed with `params: null` gets the best experiment's (recipe.bestParams). */
  params: Params;
  hypothesis: string;
  patch?: { commit: string; summary: string; hash: string };
}

export interface AgentProposals {
  accepted: AgentProposal[];
  /** One line per rejected proposal: `proposals.2: lr: 5 is outside [0.0003, 0.03]`. */
  rejected: string[];
  /** The agent_calls rows of every request: the first, its tool rounds, the repair and its tool rounds. */
  callIds: string[];
}

/**
 * Asks for a batch: the first request, then, when something was rejected, one repair. With `analyst` (a recipe
 * campaign's), the model may call the analyst tool before each reply, at most MAX_TOOL_ROUNDS rounds in all; a
 * reply that calls it after that is unusable, as a reply that is not JSON is.
 */
export async function proposeWithAgent(
  agent: AgentCaller,
  model: string,
  context: ProposerContext,
  seen: ReadonlySet<string>,
  checkPatch?: PatchChecker,
  analyst?: AnalystAnswer,
): Promise<AgentProposals> {
  const promptVersion = checkPatch ? PATCH_PROPOSER_PROMPT_VERSION : PROPOSER_PROMPT_VERSION;
  const schema = checkPatch ? patchJsonSchema(context.searchSpace) : proposerJsonSchema(context.searchSpace);
  const messages: AgentMessage[] = [
    { role: 'system', content: loadPrompt(promptVersion) },
    { role: 'user', content: JSON.stringify(context) },
  ];
  const rounds: ToolRounds | undefined = analyst
    ? {
        tools: [ANALYST_TOOL],
        answer: (c) => answerAnalystCall(c.name, c.arguments, analyst),
        left: MAX_TOOL_ROUNDS,
        max: MAX_TOOL_ROUNDS,
      }
    : undefined;
  const result: AgentProposals = { accepted: [], rejected: [], callIds: [] };
  for (let round = 0; round < 2; round++) {
    const turn = await completeWithTools(
      agent,
      { role: 'proposer', promptVersion, model, schema, callIndex: `proposer/${round}` },
      messages,
      rounds,
    );
    const { reply } = turn;
    result.callIds.push(...turn.callIds);
    let reasons: string[];
    try {
      if (turn.overLimit) throw new UnusableReplyError(turn.overLimit);
      const keys = new Set([
        ...seen,
        ...result.accepted.flatMap((a) => (a.patch || !a.params ? [] : [spaceKey(context.searchSpace, a.params)])),
      ]);
      const checked = checkPatch
        ? await checkPatchProposals(parseStructured(reply.choice, patchReplySchema), context, keys, checkPatch)
        : checkProposals(parseStructured(reply.choice, proposerReplySchema), context.searchSpace, keys);
      const room = context.count - result.accepted.length;
      result.accepted.push(...checked.accepted.slice(0, room));
      reasons = checked.rejected;
      if (checked.accepted.length < room && checked.rejected.length === 0)
        reasons = [`${checked.accepted.length} proposals for ${room} places`];
      if (reasons.length > 0) await agent.judge(reply.callId, 'rejected', reasons.join(' | '));
    } catch (e) {
      if (!(e instanceof UnusableReplyError)) throw e;
      reasons = [e.message];
      await agent.judge(reply.callId, 'unusable', e.message);
    }
    result.rejected.push(...reasons.map((r) => (round === 0 ? r : `repair: ${r}`)));
    if (reasons.length === 0 || result.accepted.length >= context.count) break;
    const missing = context.count - result.accepted.length;
    // A tool call too many is in the conversation already, with its answer.
    if (!turn.overLimit) messages.push({ role: 'assistant', content: reply.choice.message.content ?? reply.choice.message.refusal ?? '' });
    messages.push({
      role: 'user',
      content: checkPatch
        ? `Your reply was rejected: ${reasons.join(' | ')}. Reply again with ${missing} new proposals that fix this: params with every knob of searchSpace inside its range or choices (or null with a patch), a patch that applies to recipe.files as given, changes only recipe.mutable files, stays under recipe.maxPatchBytes and is not in recipe.tried or already accepted (${JSON.stringify(result.accepted.map((a) => a.patch?.summary ?? a.params))}).`
        : `Your reply was rejected: ${reasons.join(' | ')}. Reply again with ${missing} new proposals that fix this: every knob of searchSpace, inside its range or choices, no other keys, no configuration from the leaderboard or already accepted (${JSON.stringify(result.accepted.map((a) => a.params))}).`,
    });
  }
  return result;
}

/**
 * A recipe campaign's proposals: one without a patch is checked as a knob proposal (checkProposals); one with a patch
 * has its knobs (if any) checked against the space, not the history (the same knobs with other code are a new
 * experiment), and its diff by the recipe's checks, in order, so a patch accepted earlier in the reply is tried.
 */
async function checkPatchProposals(
  reply: PatchReply,
  context: ProposerContext,
  seen: ReadonlySet<string>,
  checkPatch: PatchChecker,
): Promise<{ accepted: AgentProposal[]; rejected: string[] }> {
  const space = context.searchSpace;
  const keys = new Set(seen);
  const out: { accepted: AgentProposal[]; rejected: string[] } = { accepted: [], rejected: [] };
  for (const [i, p] of reply.proposals.entries()) {
    const where = `proposals.${i}`;
    if (p.patch === null) {
      if (p.params === null) {
        out.rejected.push(`${where}: neither params nor a patch`);
        continue;
      }
      const knob = checkProposals({ proposals: [{ params: p.params, hypothesis: p.hypothesis }] }, space, keys, i);
      out.rejected.push(...knob.rejected);
      for (const a of knob.accepted) {
        keys.add(spaceKey(space, a.params));
        out.accepted.push(a);
      }
      continue;
    }
    const problems = p.params === null ? [] : validateParams(space, p.params);
    if (problems.length > 0) {
      out.rejected.push(`${where}: ${problems.join('; ')}`);
      continue;
    }
    const verdict = await checkPatch(p.patch, p.hypothesis);
    if (!verdict.ok) {
      out.rejected.push(`${where}: patch rejected: ${verdict.reason}`);
      continue;
    }
    out.accepted.push({
      params: p.params ?? context.recipe?.bestParams ?? {},
      hypothesis: p.hypothesis,
      patch: { commit: verdict.commit, summary: verdict.summary, hash: verdict.hash },
    });
  }
  return out;
}
