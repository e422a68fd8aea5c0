// What an agent (proposer, analyst, teacher) asks of the shared caller, and what it gets back. The caller
// (activities/agents/agent-caller.ts) checks the budgets, sends the request, records it in `agent_calls` exactly
// once and reuses an earlier attempt's reply; agents only build requests and judge replies.
import type { ReplyChoice } from './structured-reply';

export type AgentRole = 'proposer' | 'analyst' | 'teacher';

/** A strict JSON schema for the reply: sent as `response_format.json_schema`, or as a tool's parameters. */
export interface ReplySchema {
  name: string;
  strict: true;
  schema: Record<string, unknown>;
  description?: string;
}

/** A call the model asked for (an OpenAI function tool call), as recorded with its reply. */
export interface ToolCall {
  id: string;
  name: string;
  /** The arguments, a JSON text as the model wrote it (not yet checked). */
  arguments: string;
}

/**
 * One message of the conversation, in the shapes Chat Completions takes: the assistant's tool calls and each call's
 * answer (a `tool` message naming its id) go back to the model with the next request.
 */
export type AgentMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** A function the model may call before it replies (the proposer's `analyst`): sent in `tools`, strict. */
export interface AgentTool {
  name: string;
  description: string;
  /** A strict JSON schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface AgentRequest {
  role: AgentRole;
  /** The prompt file (agents/prompts/<promptVersion>.md) the system message holds. */
  promptVersion: string;
  model: string;
  messages: AgentMessage[];
  schema: ReplySchema;
  /** Functions the model may call instead of replying (with `response_format`); none unless given. */
  tools?: AgentTool[];
  /** `auto`: it may call them; `none`: it must reply (its tool rounds are spent). @default 'auto' */
  toolChoice?: 'auto' | 'none';
  /**
   * This call's place in its activity, the same on every attempt (`proposer/0`, `proposer/1` for the repair,
   * `proposer/0/tool1` for the request after the first tool answers, the teacher's hash of the failure): with the
   * workflow and activity ids it is the record's idempotency key.
   */
  callIndex: string;
}

export interface AgentReply {
  /** The `agent_calls` row. */
  callId: string;
  choice: ReplyChoice;
  /** The reply came from the row an earlier attempt of the activity wrote: no request was sent. */
  reused: boolean;
}

export interface AgentCaller {
  complete(request: AgentRequest): Promise<AgentReply>;
  /** Marks a recorded reply as unusable (not JSON, wrong schema) or rejected (outside the search space), with why. */
  judge(callId: string, outcome: 'unusable' | 'rejected', reason: string): Promise<void>;
}
