// Recipe campaigns (trainer.recipe: a copy of the reference PyTorch trainer, train.py mutable) whose proposer is a
// scripted chat model, and the propose activity run as a worker runs it. One local Chat Completions server answers
// each campaign from its own script, found by the goal in the request's user message (chat-server.ts
// startGoalServer). Nothing trains: a test writes the scores it needs.
import { MockActivityEnvironment } from '@temporalio/testing';
import { asc, eq } from 'drizzle-orm';
import type { ActivityDeps } from '../../activities/deps';
import { proposeExperiments } from '../../activities/inner/propose-experiments';
import type { Proposal, ProposeInput } from '../../contracts/inner-activities';
import type { CampaignSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { agentCalls, experiments, recipePatches } from '../../db/schema';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { startGoalServer, type ChatRequest, type ChatServer, type GoalScript } from './chat-server';
import { scratchDir } from './env';
import { contextOf } from './proposer-campaigns';
import { torchRecipeFolder, torchRecipeSpec } from './recipe-patches';
import { uniqueName } from './specs';

export interface RecipeCampaign {
  name: string;
  /** The loop `${name}/inner/1`. */
  loop: string;
  spec: CampaignSpec;
  /** The imported (pinned) recipe commit. */
  imported: string;
  /** proposeExperiments' input for `count` experiments from `startIndex`. */
  input(startIndex: number, count: number): ProposeInput;
  /** The loop's experiments, by index. */
  rows(): Promise<(typeof experiments.$inferSelect)[]>;
  /** The loop's recipe_patches rows, by id. */
  patches(): Promise<(typeof recipePatches.$inferSelect)[]>;
  /** The requests the server got for this campaign, in order. */
  requests(): ChatRequest[];
  /** The campaign's agent_calls rows, oldest first. */
  calls(): Promise<(typeof agentCalls.$inferSelect)[]>;
}

export interface RecipeProposers {
  server: ChatServer;
  deps(): ActivityDeps;
  /** The activity as a worker runs it: one activity id per batch; `attempt` as Temporal counts a retry. */
  propose(input: ProposeInput, attempt?: number): Promise<Proposal[]>;
  campaign(
    label: string,
    script: GoalScript,
    opts?: { confirmSeeds?: number; searchSpace?: Record<string, unknown> },
  ): Promise<RecipeCampaign>;
  close(): Promise<void>;
}

export async function recipeProposers(db: Db, home: string, model: string): Promise<RecipeProposers> {
  const server = await startGoalServer();
  const deps = (): ActivityDeps => ({ db, home, agentEnv: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: server.baseUrl } });
  return {
    server,
    deps,
    propose: (input, attempt = 1) =>
      new MockActivityEnvironment({ activityId: `propose-${input.innerLoopId}-${input.startIndex}`, attempt }).run(
        proposeExperiments,
        deps(),
        input,
      ) as Promise<Proposal[]>,
    async campaign(label, script, opts = {}) {
      const name = uniqueName(label);
      const spec = torchRecipeSpec(name, torchRecipeFolder(scratchDir(`recipe-${label}`)), {
        steps: 40,
        lr: 0.003,
        confirmSeeds: opts.confirmSeeds ?? 0,
        over: { goal: `goal of ${name}`, agents: { proposer: { model } }, ...(opts.searchSpace ? { searchSpace: opts.searchSpace } : {}) },
      });
      const { versionId, spec: parsed } = await registerCampaignVersion(db, spec, undefined, home);
      server.scripts.set(`goal of ${name}`, script);
      const loop = `${name}/inner/1`;
      return {
        name,
        loop,
        spec: parsed,
        imported: parsed.trainer.recipe!.commit!,
        input: (startIndex, count) => ({
          campaignId: name,
          campaignVersionId: versionId,
          innerLoopId: loop,
          datasetVersionId: 'v',
          startIndex,
          count,
        }),
        rows: () => db.select().from(experiments).where(eq(experiments.innerLoopId, loop)).orderBy(asc(experiments.index)),
        patches: () => db.select().from(recipePatches).where(eq(recipePatches.innerLoopId, loop)).orderBy(asc(recipePatches.id)),
        requests: () => server.requests.filter((r) => contextOf(r).goal === `goal of ${name}`),
        calls: () =>
          db.select().from(agentCalls).where(eq(agentCalls.campaignId, name)).orderBy(asc(agentCalls.createdAt), asc(agentCalls.id)),
      };
    },
    close: () => server.close(),
  };
}
