// An inner loop's leaderboard: one page of experiments, best public score first, with duration and capacity wait
// computed in SQL; and the count per status for the page's header.
import { count, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { experiments } from '../../db/schema';

/** Seconds from start to finish (to now for one still running); null before it started. */
export const durationSeconds = sql<
  number | null
>`extract(epoch FROM (coalesce(${experiments.finishedAt}, now()) - ${experiments.startedAt}))::float8`;

/** What a leaderboard row and an experiment's page both show of an experiment, in the order their JSON keys have. */
export const proposalColumns = {
  index: experiments.index,
  params: experiments.params,
  hypothesis: experiments.hypothesis,
  proposer: experiments.proposer,
  status: experiments.status,
  public_score: experiments.publicScore,
  heldout_score: experiments.heldoutScore,
};

export const leaderboardColumns = {
  id: experiments.id,
  ...proposalColumns,
  duration_s: durationSeconds,
  capacity_wait_s: experiments.capacityWaitSeconds,
  error: experiments.error,
};

export type LeaderboardRow = Awaited<ReturnType<typeof leaderboardPage>>[number];

/**
 * Rank order: the selection mode decides the direction; experiments without a score come last, by index (the order
 * of the experiments_loop_rank_{min,max}_idx indexes, so a page is read without sorting the loop).
 */
export const leaderboardPage = (db: Db, innerLoopId: string, mode: 'min' | 'max', limit: number, offset: number) =>
  db
    .select(leaderboardColumns)
    .from(experiments)
    .where(eq(experiments.innerLoopId, innerLoopId))
    .orderBy(
      mode === 'max' ? sql`${experiments.publicScore} DESC NULLS LAST` : sql`${experiments.publicScore} ASC NULLS LAST`,
      experiments.index,
    )
    .limit(limit)
    .offset(offset);

export async function statusCounts(db: Db, innerLoopId: string): Promise<Record<string, number>> {
  const r = await db
    .select({ status: experiments.status, n: count() })
    .from(experiments)
    .where(eq(experiments.innerLoopId, innerLoopId))
    .groupBy(experiments.status)
    .orderBy(experiments.status);
  return Object.fromEntries(r.map((x) => [x.status, x.n]));
}
