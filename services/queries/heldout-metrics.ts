// A checkpoint's held-out metrics (`eval_results`, held-out split): what `flywheel demo --task` prints before and
// after, overall and per category. Scores only: held-out items and outputs never leave the eval activity.
import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { evalResults } from '../../db/schema';

export async function heldoutMetricsOf(db: Db, checkpointId: string): Promise<Record<string, number> | undefined> {
  const [r] = await db
    .select({ metrics: evalResults.metrics })
    .from(evalResults)
    .where(and(eq(evalResults.checkpointId, checkpointId), eq(evalResults.split, 'heldout')))
    .orderBy(evalResults.id)
    .limit(1);
  return r?.metrics;
}
