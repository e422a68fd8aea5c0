// A checkpoint's metrics on a sealed split (`eval_results`): held-out, what `flywheel demo --task` prints before and
// after, overall and per category; test, what a report claims (bench/outer-ablation.ts). Scores only: sealed items
// and outputs never leave the eval activity.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { evalResults } from '../../db/schema';
import type { SealedSplit } from '../suites/heldout-items';

export async function heldoutMetricsOf(
  db: Db,
  checkpointId: string,
  split: SealedSplit = 'heldout',
): Promise<Record<string, number> | undefined> {
  const [r] = await db
    .select({ metrics: evalResults.metrics })
    .from(evalResults)
    .where(and(eq(evalResults.checkpointId, checkpointId), eq(evalResults.split, split)))
    .orderBy(evalResults.id)
    .limit(1);
  return r?.metrics;
}
