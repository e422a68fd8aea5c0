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

export interface AgentMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface AgentRequest {
  role: AgentRole;
  /** The prompt file (agents/prompts/<promptVersion>.md) the system message holds. */
  promptVersion: string;
  model: string;
  messages: AgentMessage[];
  schema: ReplySchema;
  /**
   * This call's place in its activity, the same on every attempt (`proposer/0`, `proposer/1` for the repair, the
   * teacher's hash of the failure): with the workflow and activity ids it is the record's idempotency key.
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
