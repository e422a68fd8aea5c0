// What every activity receives (dependency injection): the database, the local state folder, the clock, the training
// backends, the agents' endpoint. Tests hand in a real database on the test server and a scratch folder, and may hand
// in a fixed clock or a fake backend.
import type { AgentEnv } from '../agents/openai-client';
import { backendFor } from '../backends';
import type { Db } from '../db/client';
import { campaignResolver, type CampaignResolver } from '../services/campaigns/campaign-resolver';
import type { PredictServers } from './eval/predict-servers';

/** The time, in epoch milliseconds, for the decisions an activity takes on it (deadlines) and the times it records. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface ActivityDeps {
  db: Db;
  /** FLYWHEEL_HOME: runs, datasets and eval scratch live under it. */
  home: string;
  /**
   * Deadlines (a training run's time limit), waits and recorded times (a run's end); tests pin it.
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Builds the training backend a spec (`kind`, its options) or a job handle names; tests hand in a fake one.
   * @default backendFor (backends/index.ts)
   */
  backendFor?: typeof backendFor;
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
   * Whether the workflow's pending activity has a cancel request that Temporal holds (it reaches the activity only
   * with a heartbeat, which the SDK throttles): a capacity grant after a wait asks it before a launch. Absent: never.
   */
  activityCancelRequested?: (workflowId: string, activityId: string) => Promise<boolean>;
  /**
   * Where the agents (proposer, analyst, teacher) find their OpenAI-compatible endpoint. Tests hand in a local server.
   * @default process.env (`OPENAI_BASE_URL`, `OPENAI_API_KEY`); neither set means the built-in roles
   */
  agentEnv?: AgentEnv;
  /**
   * The campaign an activity runs, by its pinned version id: read and validated once per process (versions never
   * change). Activities ask it through `campaignsOf(deps)`. @default one resolver per `db` for the whole process
   */
  campaigns?: CampaignResolver;
  /**
   * The eval worker's warm predict servers (activities/eval/predict-servers.ts), for trainers that speak
   * `predict --serve`; tests hand in a pool of their own to see it and close it. @default one pool for the whole process
   */
  predictServers?: PredictServers;
}

const resolvers = new WeakMap<Db, CampaignResolver>();

/** The injected campaign resolver, or the process's one for `deps.db` (so every activity shares its memo). */
export function campaignsOf(deps: ActivityDeps): CampaignResolver {
  if (deps.campaigns) return deps.campaigns;
  let r = resolvers.get(deps.db);
  if (!r) resolvers.set(deps.db, (r = campaignResolver(deps.db)));
  return r;
}

/** ActivityDeps whose clock, backend factory and campaign resolver are filled in. */
export type ActivityDepsWithDefaults = ActivityDeps & Required<Pick<ActivityDeps, 'clock' | 'backendFor' | 'campaigns'>>;

/** `deps` with its clock, backend factory and campaign resolver filled in (their defaults above). */
export function withDefaults(deps: ActivityDeps): ActivityDepsWithDefaults {
  return { ...deps, clock: deps.clock ?? systemClock, backendFor: deps.backendFor ?? backendFor, campaigns: campaignsOf(deps) };
}
