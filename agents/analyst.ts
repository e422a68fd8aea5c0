// The analyst as a chat model: after each batch, a short plain-English account of what changed, what it suggests
// and what to try next. Its reply is text for people (stored and shown), never an instruction to the loop.
import { z } from 'zod';
import { UnusableReplyError } from './agent-errors';
import type { AgentCaller, ReplySchema } from './agent-request';
import { loadPrompt } from './load-prompt';
import { parseStructured } from './structured-reply';

export const ANALYST_PROMPT_VERSION = 'analyst.v1';
/** Longest account kept (characters); a longer one is cut with an ellipsis. */
const MAX_ACCOUNT = 2000;

const analystReplySchema = z.strictObject({ account: z.string().trim().min(1) });

const ANALYST_JSON_SCHEMA: ReplySchema = {
  name: 'batch_analysis',
  strict: true,
  description: "A short plain-English account of the batch's results.",
  schema: { type: 'object', additionalProperties: false, required: ['account'], properties: { account: { type: 'string' } } },
};

export interface AnalystContext {
  goal: string;
  metric: string;
  mode: 'min' | 'max';
  batch: unknown[];
  bestBefore: unknown;
  leaderboard: unknown[];
}

/** The model's account and its agent_calls row; UnusableReplyError (recorded on the row) when the reply is unusable. */
export async function analyzeWithAgent(
  agent: AgentCaller,
  model: string,
  context: AnalystContext,
): Promise<{ text: string; callId: string }> {
  const reply = await agent.complete({
    role: 'analyst',
    promptVersion: ANALYST_PROMPT_VERSION,
    model,
    callIndex: 'analyst/0',
    messages: [
      { role: 'system', content: loadPrompt(ANALYST_PROMPT_VERSION) },
      { role: 'user', content: JSON.stringify(context) },
    ],
    schema: ANALYST_JSON_SCHEMA,
  });
  try {
    const { account } = parseStructured(reply.choice, analystReplySchema);
    return { text: account.length > MAX_ACCOUNT ? `${account.slice(0, MAX_ACCOUNT)}…` : account, callId: reply.callId };
  } catch (e) {
    if (e instanceof UnusableReplyError) await agent.judge(reply.callId, 'unusable', e.message);
    throw e;
  }
}
