// Agent calls: one row per request to an agent's chat model (proposer, analyst, teacher) under an attempt-independent
// id, so a retried activity finds the reply its earlier attempt paid for; a request that got no reply is recorded
// under `${callId}/attempt${n}`. A reply and its tokens' ledger row are written in one transaction.
import { eq, sum } from 'drizzle-orm';
import type { Db } from '../db/client';
import { agentCalls } from '../db/schema';
import { recordTokenCost, tokenCostUsd } from './cost-ledger';
import type { Queryable } from './queryable';

/** What every record of a call carries. */
export interface AgentCallBase {
  campaignId: string;
  role: string;
  promptVersion: string;
  model: string;
}

/** The raw reply recorded under `callId` by an earlier attempt, if it got one. */
export async function recordedReply(q: Queryable, callId: string): Promise<string | undefined> {
  const [row] = await q.select({ rawReply: agentCalls.rawReply }).from(agentCalls).where(eq(agentCalls.id, callId));
  return row?.rawReply ?? undefined;
}

export interface AgentReplyRecord extends AgentCallBase {
  callId: string;
  tokensIn: number;
  tokensOut: number;
  latencyMs: number;
  rawReply: string;
  mode: string;
  /** USD per million tokens, in and out, as the spec prices them. */
  usdPerMillion: { input: number; output: number };
}

/**
 * Records a reply and its tokens' ledger row in one transaction, each once (ON CONFLICT DO NOTHING). Returns what
 * the call cost in USD.
 */
export async function recordAgentReply(db: Db, r: AgentReplyRecord): Promise<number> {
  const { callId, usdPerMillion, campaignId, role, promptVersion, model } = r;
  const costUsd = tokenCostUsd(r);
  await db.transaction(async (tx) => {
    await tx
      .insert(agentCalls)
      .values({
        id: callId,
        campaignId,
        role,
        promptVersion,
        model,
        tokensIn: r.tokensIn,
        tokensOut: r.tokensOut,
        costUsd,
        latencyMs: r.latencyMs,
        rawReply: r.rawReply,
        mode: r.mode,
        outcome: 'ok',
      })
      .onConflictDoNothing();
    await recordTokenCost(tx, { callId, campaignId, model, tokensIn: r.tokensIn, tokensOut: r.tokensOut, usdPerMillion });
  });
  return costUsd;
}

export interface AgentFailureRecord extends AgentCallBase {
  /** `${callId}/attempt${n}`: one record per real request. */
  id: string;
  latencyMs: number;
  mode: string;
  reason: string;
}

/** Records a request that got no usable reply (an error, a cancel), once per attempt. */
export async function recordAgentFailure(q: Queryable, f: AgentFailureRecord): Promise<void> {
  await q
    .insert(agentCalls)
    .values({ ...f, outcome: 'error' })
    .onConflictDoNothing();
}

/** What became of a reply: rejected or unusable, with why. */
export async function judgeAgentCall(q: Queryable, callId: string, outcome: string, reason: string): Promise<void> {
  await q.update(agentCalls).set({ outcome, reason }).where(eq(agentCalls.id, callId));
}

/** Tokens the campaign's agents have used, over every recorded call. */
export async function campaignTokens(q: Queryable, campaignId: string): Promise<number> {
  const [row] = await q
    .select({ tokensIn: sum(agentCalls.tokensIn).mapWith(Number), tokensOut: sum(agentCalls.tokensOut).mapWith(Number) })
    .from(agentCalls)
    .where(eq(agentCalls.campaignId, campaignId));
  return (row?.tokensIn ?? 0) + (row?.tokensOut ?? 0);
}
