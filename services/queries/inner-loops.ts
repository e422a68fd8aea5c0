// Inner loops: a campaign's list (with experiment counts and best public score aggregated in SQL) and one loop.
import { count, desc, eq, max, min, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { campaigns, campaignVersions, experiments, innerLoops } from '../../db/schema';

// A loop's selection is its pinned version's (the campaign's latest only for a row that pins none).
const mode = sql<'min' | 'max'>`coalesce(${campaignVersions.spec}->'selection'->>'mode', ${campaigns.spec}->'selection'->>'mode', 'min')`;

/** The loop's experiments aggregated in the database, per loop of the page (a lateral subquery). */
const tally = (db: Db) =>
  db
    .select({
      experiments: count().as('experiments'),
      running: sql<number>`count(*) FILTER (WHERE ${experiments.status} = 'running')`.mapWith(Number).as('running'),
      max_public: max(experiments.publicScore).as('max_public'),
      min_public: min(experiments.publicScore).as('min_public'),
    })
    .from(experiments)
    .where(eq(experiments.innerLoopId, innerLoops.id))
    .as('x');

function selectLoops(db: Db) {
  const x = tally(db);
  return db
    .select({
      id: innerLoops.id,
      campaign_id: innerLoops.campaignId,
      /** The campaign version the loop runs. */
      campaign_version_id: innerLoops.campaignVersionId,
      dataset_version_id: innerLoops.datasetVersionId,
      base_checkpoint_id: innerLoops.baseCheckpointId,
      status: innerLoops.status,
      best_experiment_id: innerLoops.bestExperimentId,
      created_at: innerLoops.createdAt,
      updated_at: innerLoops.updatedAt,
      metric: sql<string>`coalesce(${campaignVersions.spec}->'selection'->>'metric', ${campaigns.spec}->'selection'->>'metric', 'bits_per_byte')`,
      mode,
      experiments: x.experiments,
      running: x.running,
      best_public: sql<number | null>`CASE WHEN ${mode} = 'max' THEN ${x.max_public} ELSE ${x.min_public} END`,
    })
    .from(innerLoops)
    .leftJoin(campaigns, eq(campaigns.id, innerLoops.campaignId))
    .leftJoin(campaignVersions, eq(campaignVersions.id, innerLoops.campaignVersionId))
    .crossJoinLateral(x);
}

export type InnerLoopRow = Awaited<ReturnType<typeof innerLoopsOf>>[number];

export const innerLoopsOf = (db: Db, campaignId: string, limit: number, offset: number) =>
  selectLoops(db)
    .where(eq(innerLoops.campaignId, campaignId))
    .orderBy(desc(innerLoops.createdAt), innerLoops.id)
    .limit(limit)
    .offset(offset);

export const countInnerLoops = async (db: Db, campaignId: string): Promise<number> =>
  (await db.select({ n: count() }).from(innerLoops).where(eq(innerLoops.campaignId, campaignId)))[0]?.n ?? 0;

export const getInnerLoop = async (db: Db, id: string): Promise<InnerLoopRow | undefined> =>
  (await selectLoops(db).where(eq(innerLoops.id, id)))[0];

/** The campaign version an inner loop pinned at its start (undefined for an unknown loop). */
export const campaignVersionOfLoop = async (db: Db, innerLoopId: string): Promise<string | null | undefined> =>
  (await db.select({ v: innerLoops.campaignVersionId }).from(innerLoops).where(eq(innerLoops.id, innerLoopId)))[0]?.v;
