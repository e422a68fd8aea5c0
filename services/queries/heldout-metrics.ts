// A checkpoint's held-out metrics (`eval_results`, held-out split): what `flywheel demo --task` prints before and
// after, overall and per category. Scores only: held-out items and outputs never leave the eval activity.
import type { Db } from '../../db/client';
import { one } from './run-query';

export async function heldoutMetricsOf(db: Db, checkpointId: string): Promise<Record<string, number> | undefined> {
  const r = await one<{ metrics: Record<string, number> }>(
    db,
    `SELECT metrics FROM eval_results WHERE checkpoint_id = $1 AND split = 'heldout' ORDER BY id LIMIT 1`,
    [checkpointId],
  );
  return r?.metrics;
}
