// The proposer as a chat model: asks for a batch of experiments, checks every proposal against the search space
// and the history, and asks once more with the reasons when something was rejected. What it returns is only ever
// valid, new configurations; the caller fills the rest of the batch with the built-in sampler.
import { UnusableReplyError } from './agent-errors';
import type { AgentCaller, AgentMessage } from './agent-request';
import { loadPrompt } from './load-prompt';
import { checkProposals, proposerJsonSchema, proposerReplySchema, spaceKey, type CheckedProposals } from './proposer-reply';
import { parseStructured } from './structured-reply';
import type { SearchSpace } from '../core/spec';

export const PROPOSER_PROMPT_VERSION = 'proposer.v1';

export interface ProposerContext {
  goal: string;
  metric: string;
  mode: 'min' | 'max';
  searchSpace: SearchSpace;
  /** Public scores only: held-out scores never enter an agent's context. */
  leaderboard: unknown[];
  analyses: string[];
  count: number;
}

export interface AgentProposals extends CheckedProposals {
  /** The agent_calls rows of the request and the repair (if any). */
  callIds: string[];
}

export async function proposeWithAgent(
  agent: AgentCaller,
  model: string,
  context: ProposerContext,
  seen: ReadonlySet<string>,
): Promise<AgentProposals> {
  const schema = proposerJsonSchema(context.searchSpace);
  const messages: AgentMessage[] = [
    { role: 'system', content: loadPrompt(PROPOSER_PROMPT_VERSION) },
    { role: 'user', content: JSON.stringify(context) },
  ];
  const result: AgentProposals = { accepted: [], rejected: [], callIds: [] };
  for (let round = 0; round < 2; round++) {
    const reply = await agent.complete({
      role: 'proposer',
      promptVersion: PROPOSER_PROMPT_VERSION,
      model,
      messages,
      schema,
      callIndex: `proposer/${round}`,
    });
    result.callIds.push(reply.callId);
    let reasons: string[];
    try {
      const parsed = parseStructured(reply.choice, proposerReplySchema);
      const checked = checkProposals(
        parsed,
        context.searchSpace,
        new Set([...seen, ...result.accepted.map((a) => spaceKey(context.searchSpace, a.params))]),
      );
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
    messages.push(
      { role: 'assistant', content: reply.choice.message.content ?? reply.choice.message.refusal ?? '' },
      {
        role: 'user',
        content: `Your reply was rejected: ${reasons.join(' | ')}. Reply again with ${missing} new proposals that fix this: every knob of searchSpace, inside its range or choices, no other keys, no configuration from the leaderboard or already accepted (${JSON.stringify(result.accepted.map((a) => a.params))}).`,
      },
    );
  }
  return result;
}
