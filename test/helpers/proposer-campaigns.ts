// Campaigns whose proposer is a scripted chat model: one local Chat Completions server (chat-server.ts) answers each
// campaign from its own script, found by the goal in the request's user message, so tests share one server.
import { asc, eq } from 'drizzle-orm';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import type { ProposeInput } from '../../contracts/inner-activities';
import type { AgentEnv } from '../../agents/openai-client';
import { type CampaignSpec } from '../../core/spec';
import { parseSpec } from '../../tasks/task-spec';
import type { Db } from '../../db/client';
import { agentCalls, experiments } from '../../db/schema';
import { startGoalServer, type ChatReply, type ChatRequest, type ChatServer, type GoalScript } from './chat-server';
import { fastBuiltinSpec, uniqueName } from './specs';

/** The n-th request of a campaign gets the n-th reply of its script (the last one repeats). */
export type ChatScript = GoalScript;

export interface HistoryRow {
  params: Record<string, number>;
  score: number;
  proposer?: string;
  hypothesis?: string;
}

export interface ProposerCampaign {
  name: string;
  /** The loop `${name}/inner/1`. */
  loop: string;
  spec: CampaignSpec;
  /** proposeExperiments' input for `count` experiments from `startIndex` (default: after the history). */
  input(startIndex?: number, count?: number): ProposeInput;
}

export interface ProposerCampaigns {
  server: ChatServer;
  /** The worker environment that points the agents at the server. */
  env: AgentEnv;
  /** A registered campaign whose proposer is `model`, with `history` finished experiments of its loop. */
  campaign(label: string, script: ChatScript, over?: Record<string, unknown>, history?: HistoryRow[]): Promise<ProposerCampaign>;
  requestsOf(name: string): ChatRequest[];
  callsOf(name: string): Promise<(typeof agentCalls.$inferSelect)[]>;
  close(): Promise<void>;
}

/** The proposer's context (the JSON user message) of a request. */
export const contextOf = (r: ChatRequest) =>
  JSON.parse(r.body.messages[1].content) as {
    goal: string;
    leaderboard: Record<string, unknown>[];
    analyses: string[];
    count: number;
    searchSpace: unknown;
  };

/** A chat completion with `{ proposals }` as its content. */
export const proposalsReply = (proposals: unknown[]): ChatReply => ({ content: JSON.stringify({ proposals }) });

export async function proposerCampaigns(db: Db, model: string): Promise<ProposerCampaigns> {
  const server = await startGoalServer();
  return {
    server,
    env: { OPENAI_API_KEY: 'sk-test-proposer', OPENAI_BASE_URL: server.baseUrl },
    async campaign(label, script, over = {}, history = []) {
      const name = uniqueName(label);
      const spec = fastBuiltinSpec(name, { goal: `goal of ${name}`, agents: { proposer: { model } }, ...over });
      const { versionId: campaignVersionId } = await registerCampaignVersion(db, spec);
      server.scripts.set(`goal of ${name}`, script);
      const loop = `${name}/inner/1`;
      if (history.length > 0) {
        await db.insert(experiments).values(
          history.map((x, i) => ({
            id: `${loop}/e${i}`,
            campaignId: name,
            campaignVersionId,
            innerLoopId: loop,
            index: i,
            datasetVersionId: 'v',
            params: x.params,
            hypothesis: x.hypothesis ?? '',
            proposer: x.proposer ?? 'tpe',
            status: 'succeeded',
            publicScore: x.score,
            heldoutScore: 0.98765,
          })),
        );
      }
      const input = (startIndex = history.length, count = 2) => ({
        campaignId: name,
        campaignVersionId,
        innerLoopId: loop,
        datasetVersionId: 'v',
        startIndex,
        count,
      });
      return { name, loop, spec: parseSpec(spec), input };
    },
    requestsOf: (name) => server.requests.filter((r) => contextOf(r).goal === `goal of ${name}`),
    callsOf: (name) => db.select().from(agentCalls).where(eq(agentCalls.campaignId, name)).orderBy(asc(agentCalls.createdAt)),
    close: () => server.close(),
  };
}
