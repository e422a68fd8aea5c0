// What every activity receives (dependency injection): the database, the local state folder, a clock, the teacher.
// Tests hand in a real database on the test server and a scratch folder.
import type { AgentEnv } from '../agents/openai-client';
import type { Db } from '../db/client';
import type { CampaignResolver } from '../services/campaigns/campaign-resolver';

export interface ActivityDeps {
  db: Db;
  /** FLYWHEEL_HOME: runs, datasets and eval scratch live under it. */
  home: string;
  /** Defaults to Date.now; injectable so tests can pin time-dependent rows. */
  now?: () => number;
  /**
   * Whether a workflow execution is still running (the outer loop's claim asks it before taking over an iteration
   * whose owner may be gone). Absent: every owner counts as alive, so a stale claim is skipped, never run twice.
   */
  isWorkflowRunning?: (workflowId: string) => Promise<boolean>;
  /**
   * A workflow execution's status name (`RUNNING`, `FAILED`, `TERMINATED`, … or `NOT_FOUND`), of `runId` or the
   * latest run: the claim names how a dead owner's attempt ended. Absent: `isWorkflowRunning` decides, and the
   * reason says only that the owner is gone.
   */
  workflowStatus?: (workflowId: string, runId?: string) => Promise<string>;
  /**
   * Where the agents (proposer, analyst, teacher) find their OpenAI-compatible endpoint. Tests hand in a local server.
   * @default process.env (`OPENAI_BASE_URL`, `OPENAI_API_KEY`); neither set means the built-in roles
   */
  agentEnv?: AgentEnv;
  /**
   * The campaign an activity runs, by its pinned version id: read and validated once per process (versions never
   * change). Activities ask it through `campaignsOf(deps)`. @default a per-process resolver over `db`
   */
  campaigns?: CampaignResolver;
}
