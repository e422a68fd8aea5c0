// Campaigns: the list on the front page (with counts aggregated in SQL) and one campaign's header.
import { and, count, desc, eq, ne, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { campaigns, experiments, innerLoops, outerIterations } from '../../db/schema';
import { BASELINE_PROPOSER } from '../../contracts/experiment';

/** The line every page and report shows beside an unsandboxed campaign. */
export const UNSANDBOXED_NOTE =
  "unsandboxed: this campaign's trainer runs without the filesystem and network sandbox (trainer.unsandboxed)";

/** A correlated count subquery over one campaign's rows: computed only for the campaigns of the page. */
const countWhere = (db: Db, table: typeof innerLoops | typeof experiments | typeof outerIterations, where: SQL | undefined) =>
  sql<number>`${db.select({ n: count() }).from(table).where(where)}`.mapWith(Number);

/** A campaign's selection metric as its spec states it (the default when it states none). */
export const selectionMetric = sql<string>`coalesce(${campaigns.spec}->'selection'->>'metric', 'bits_per_byte')`;

// The keys and their order are `flywheel campaigns --json`'s.
const columns = (db: Db) => ({
  id: campaigns.id,
  created_at: campaigns.createdAt,
  production_checkpoint_id: campaigns.productionCheckpointId,
  metric: selectionMetric,
  mode: sql<'min' | 'max'>`coalesce(${campaigns.spec}->'selection'->>'mode', 'min')`,
  inner_loops: countWhere(db, innerLoops, eq(innerLoops.campaignId, campaigns.id)),
  /** Experiments, the untrained baselines (one per inner loop) not counted. */
  experiments: countWhere(db, experiments, and(eq(experiments.campaignId, campaigns.id), ne(experiments.proposer, BASELINE_PROPOSER))),
  baselines: countWhere(db, experiments, and(eq(experiments.campaignId, campaigns.id), eq(experiments.proposer, BASELINE_PROPOSER))),
  running: countWhere(db, experiments, and(eq(experiments.campaignId, campaigns.id), eq(experiments.status, 'running'))),
  outer_iterations: countWhere(db, outerIterations, eq(outerIterations.campaignId, campaigns.id)),
  last_outer_status: sql<string | null>`${db
    .select({ status: outerIterations.status })
    .from(outerIterations)
    .where(eq(outerIterations.campaignId, campaigns.id))
    .orderBy(desc(outerIterations.iteration), desc(outerIterations.attempt))
    .limit(1)}`,
  /** The spec set `trainer.unsandboxed`: its trainer runs without the filesystem and network sandbox. */
  unsandboxed: sql<boolean>`coalesce((${campaigns.spec}->'trainer'->>'unsandboxed')::boolean, false)`,
});

export type CampaignRow = Awaited<ReturnType<typeof listCampaigns>>[number];

export const listCampaigns = (db: Db, limit: number, offset: number) =>
  db.select(columns(db)).from(campaigns).orderBy(desc(campaigns.createdAt), campaigns.id).limit(limit).offset(offset);

export const countCampaigns = async (db: Db): Promise<number> => (await db.select({ n: count() }).from(campaigns))[0]?.n ?? 0;

export const getCampaign = async (db: Db, id: string): Promise<CampaignRow | undefined> =>
  (await db.select(columns(db)).from(campaigns).where(eq(campaigns.id, id)))[0];

/** The metric a campaign selects on (undefined for an unknown campaign). */
export const selectionMetricOf = async (db: Db, id: string): Promise<string | undefined> =>
  (await db.select({ metric: selectionMetric }).from(campaigns).where(eq(campaigns.id, id)))[0]?.metric;
