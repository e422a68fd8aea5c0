// The one place agent calls go through: the campaign's cost and token budgets are checked before each request,
// the request is sent (aborted when the activity is cancelled), and its record is written to `agent_calls` (and
// its tokens to `cost_ledger`) exactly once. The record's id is attempt-independent, so a retried activity reuses
// the reply its earlier attempt paid for instead of asking again.
import type OpenAI from 'openai';
import { APIUserAbortError } from 'openai';
import { classifyAgentError, TokenBudgetExceededError } from '../../agents/agent-errors';
import type { AgentCaller, AgentReply, AgentRequest } from '../../agents/agent-request';
import { hasEndpoint, openAiClient, type AgentEnv } from '../../agents/openai-client';
import { requestStructured } from '../../agents/structured-call';
import type { ReplyChoice } from '../../agents/structured-reply';
import type { CampaignSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { campaignTokens, judgeAgentCall, recordAgentFailure, recordAgentReply, recordedReply } from '../../services/agent-calls';
import { checkBudget } from '../../services/cost-ledger';
import { currentActivity } from '../heartbeat';

export interface AgentCallerOptions {
  db: Db;
  spec: CampaignSpec;
  client: OpenAI;
  /**
   * The key prefix outside an activity (a test calling a step directly). Inside one it is always
   * `${workflowId}/${runId}/${activityId}`. @default `direct/${campaignId}`
   */
  scope?: string;
}

/** Heartbeats while a request is in flight: an activity learns of its cancellation only through them. */
const HEARTBEAT_MS = 1000;

/** The caller for this campaign when the environment names an endpoint; undefined means the built-in roles. */
export function agentCallerFor(db: Db, spec: CampaignSpec, env: AgentEnv): AgentCaller | undefined {
  return hasEndpoint(env) ? agentCaller({ db, spec, client: openAiClient(env) }) : undefined;
}

export function agentCaller(opts: AgentCallerOptions): AgentCaller {
  const { db, spec, client } = opts;
  const campaignId = spec.name;
  return {
    async complete(req: AgentRequest): Promise<AgentReply> {
      const ctx = currentActivity();
      const wf = ctx?.info.workflowExecution;
      const scope = ctx && wf ? `${wf.workflowId}/${wf.runId}/${ctx.info.activityId}` : (opts.scope ?? `direct/${campaignId}`);
      const callId = `${scope}/${req.callIndex}`;
      const done = await recordedReply(db, callId);
      if (done) return { callId, choice: JSON.parse(done) as ReplyChoice, reused: true };

      await checkBudget(db, campaignId, spec);
      await checkTokens(db, spec);

      const what = `${req.role} model "${req.model}"`;
      const started = Date.now();
      const beat = ctx ? setInterval(() => ctx.heartbeat(), HEARTBEAT_MS) : undefined;
      const base = { campaignId, role: req.role, promptVersion: req.promptVersion, model: req.model };
      try {
        const r = await requestStructured(client, req, ctx?.cancellationSignal);
        // The reply and its tokens' ledger row, in one transaction, each once.
        await recordAgentReply(db, {
          callId,
          ...base,
          tokensIn: r.tokensIn,
          tokensOut: r.tokensOut,
          latencyMs: Date.now() - started,
          rawReply: JSON.stringify(r.choice),
          mode: r.mode,
          usdPerMillion: spec.agents.usdPerMillionTokens,
        });
        return { callId, choice: r.choice, reused: false };
      } catch (e) {
        const cancelled = e instanceof APIUserAbortError || ctx?.cancellationSignal.aborted === true;
        const err = cancelled ? e : classifyAgentError(e, what, [client.apiKey, client.baseURL]);
        const reason = cancelled
          ? 'cancelled: the activity was cancelled during the request'
          : err instanceof Error
            ? err.message
            : String(err);
        await recordAgentFailure(db, {
          id: `${callId}/attempt${ctx?.info.attempt ?? 1}`,
          ...base,
          latencyMs: Date.now() - started,
          mode: 'json_schema',
          reason,
        });
        if (cancelled && ctx?.cancellationSignal.reason instanceof Error) throw ctx.cancellationSignal.reason;
        throw err;
      } finally {
        if (beat) clearInterval(beat);
      }
    },
    async judge(callId, outcome, reason) {
      await judgeAgentCall(db, callId, outcome, reason);
    },
  };
}

async function checkTokens(db: Db, spec: CampaignSpec): Promise<void> {
  const cap = spec.agents.maxTokens;
  if (cap === undefined) return;
  const used = await campaignTokens(db, spec.name);
  if (used >= cap)
    throw new TokenBudgetExceededError(`campaign "${spec.name}" has used ${used} of its ${cap} agent tokens (agents.maxTokens)`);
}
