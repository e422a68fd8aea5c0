// An inner loop's trials for its charts (history, slices, parallel coordinates, importance): index, params, status
// and public score, the untrained baseline apart. Capped at the most recent TRIALS, which the page says.
import { and, count, desc, eq, ne, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { campaigns, experiments } from '../../db/schema';
import type { SearchSpace } from '../../core/spec';
import { BASELINE_PROPOSER } from '../../contracts/experiment';

export const TRIALS = 2000;

export async function trialsOf(
  db: Db,
  innerLoopId: string,
  limit = TRIALS,
): Promise<{ trials: TrialPoint[]; total: number; baseline: number | null }> {
  const ofLoop = eq(experiments.innerLoopId, innerLoopId);
  const [latest, [n], [b]] = await Promise.all([
    db
      .select({ index: experiments.index, params: experiments.params, status: experiments.status, score: experiments.publicScore })
      .from(experiments)
      .where(and(ofLoop, ne(experiments.proposer, BASELINE_PROPOSER)))
      .orderBy(desc(experiments.index))
      .limit(limit),
    db
      .select({ n: count() })
      .from(experiments)
      .where(and(ofLoop, ne(experiments.proposer, BASELINE_PROPOSER))),
    // The untrained baseline's public score, when a loop recorded one.
    db
      .select({ score: experiments.publicScore })
      .from(experiments)
      .where(and(ofLoop, eq(experiments.proposer, BASELINE_PROPOSER)))
      .limit(1),
  ]);
  // The most recent `limit`, oldest first (an experiment's index is unique in its loop).
  return { trials: latest.reverse(), total: n?.n ?? 0, baseline: b?.score ?? null };
}

/** How many untrained baselines a loop recorded (one, or none before its first batch). */
export const baselineCount = async (db: Db, innerLoopId: string): Promise<number> =>
  (
    await db
      .select({ n: count() })
      .from(experiments)
      .where(and(eq(experiments.innerLoopId, innerLoopId), eq(experiments.proposer, BASELINE_PROPOSER)))
  )[0]?.n ?? 0;

/** The campaign's search space as its spec states it (empty when the spec has none). */
export async function searchSpaceOf(db: Db, campaignId: string): Promise<SearchSpace> {
  const [r] = await db
    .select({ space: sql<SearchSpace | null>`${campaigns.spec}->'searchSpace'` })
    .from(campaigns)
    .where(eq(campaigns.id, campaignId));
  return r?.space ?? {};
}

export interface TrialPoint {
  index: number;
  params: Record<string, unknown>;
  status: string;
  score: number | null;
}
