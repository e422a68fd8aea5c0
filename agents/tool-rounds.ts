// One turn of a conversation whose model may call tools before it replies. While a reply calls tools and rounds are
// left, every call in it (parallel calls included) is answered with a `tool` message and the model is asked again.
// Each request has its own callIndex (`<base>`, then `<base>/tool1`, `<base>/tool2`, …), so the shared caller
// records every one and a retried activity reuses each recorded reply, tool calls included, instead of asking again.
// Once the rounds are spent the request says `tool_choice: 'none'`; a reply that still calls a tool is unusable.
import type { AgentCaller, AgentMessage, AgentReply, AgentRequest, AgentTool, ToolCall } from './agent-request';

/** Calls answered from one reply; further calls in the same reply get an error answer. */
export const MAX_CALLS_PER_ROUND = 8;

/** The tools of a conversation and what is left of its rounds (shared by a turn and its repair). */
export interface ToolRounds {
  tools: AgentTool[];
  /** The `tool` message's content for one call. */
  answer(call: ToolCall): Promise<string>;
  /** Tool rounds left to the conversation; each turn that answers calls spends one. */
  left: number;
  /** Rounds it started with, for the reason of an unusable reply. */
  max: number;
}

export interface ToolTurn {
  /** The reply that ended the turn: proposals to check, or (with `overLimit`) a tool call too many. */
  reply: AgentReply;
  /** The agent_calls rows of the turn, in order. */
  callIds: string[];
  /** Set when the last reply called a tool with no rounds left: why it is unusable. */
  overLimit?: string;
}

/**
 * Asks `request` with `messages`, answering tool calls while `rounds` allow; appends the tool exchanges (the
 * assistant's calls and their answers) to `messages`, not the final reply. Without `rounds`, one plain request.
 */
export async function completeWithTools(
  agent: AgentCaller,
  request: Omit<AgentRequest, 'messages' | 'tools' | 'toolChoice'>,
  messages: AgentMessage[],
  rounds?: ToolRounds,
): Promise<ToolTurn> {
  const callIds: string[] = [];
  for (let k = 0; ; k++) {
    const left = (rounds?.left ?? 0) > 0;
    const reply = await agent.complete({
      ...request,
      messages: [...messages],
      callIndex: k === 0 ? request.callIndex : `${request.callIndex}/tool${k}`,
      ...(rounds ? { tools: rounds.tools, toolChoice: left ? ('auto' as const) : ('none' as const) } : {}),
    });
    callIds.push(reply.callId);
    const calls = reply.choice.message.toolCalls ?? [];
    if (!rounds || calls.length === 0) return { reply, callIds };
    messages.push({
      role: 'assistant',
      content: reply.choice.message.content,
      tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    });
    if (!left) {
      // Every call still gets its answer: the conversation goes on (the repair) and each call id must be answered.
      for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify({ error: 'no tool rounds left' }) });
      return { reply, callIds, overLimit: `the model called ${calls.map((c) => c.name).join(', ')} after its ${rounds.max} tool rounds` };
    }
    rounds.left--;
    for (const [i, c] of calls.entries()) {
      const content =
        i < MAX_CALLS_PER_ROUND
          ? await rounds.answer(c)
          : JSON.stringify({ error: `at most ${MAX_CALLS_PER_ROUND} calls are answered per reply` });
      messages.push({ role: 'tool', tool_call_id: c.id, content });
    }
  }
}
