// The outer loop's warm start, as the inner loop's activities see it: the checkpoint every experiment starts
// from, its file, and the configuration of the experiment that trained it (whose model-shape knobs are pinned).
import { eq } from 'drizzle-orm';
import { NotFoundError } from '../../core/errors';
import type { Params } from '../../core/spec';
import type { Db } from '../../db/client';
import { checkpoints, experiments, innerLoops } from '../../db/schema';

export interface WarmStart {
  checkpointId: string;
  /** The checkpoint file, given to the trainer as run.json `baseCheckpoint`. */
  path: string;
  /** The params of the experiment that produced it. */
  params: Params;
}

export async function warmStartOfCheckpoint(db: Db, checkpointId: string): Promise<WarmStart> {
  const [row] = await db
    .select({ path: checkpoints.path, params: experiments.params })
    .from(checkpoints)
    .innerJoin(experiments, eq(experiments.id, checkpoints.experimentId))
    .where(eq(checkpoints.id, checkpointId));
  if (!row) throw new NotFoundError(`warm-start checkpoint "${checkpointId}" does not exist`);
  return { checkpointId, path: row.path, params: row.params as Params };
}

/** The warm start of an inner loop, or null when its experiments start from scratch. */
export async function warmStartOfLoop(db: Db, innerLoopId: string): Promise<WarmStart | null> {
  const [loop] = await db.select({ base: innerLoops.baseCheckpointId }).from(innerLoops).where(eq(innerLoops.id, innerLoopId));
  return loop?.base ? warmStartOfCheckpoint(db, loop.base) : null;
}

/** `params` with the pinned knobs set to the warm start's values (knobs the base did not set are left alone). */
export function pinKnobs(params: Params, base: WarmStart, pinned: readonly string[]): Params {
  const out: Params = { ...params };
  for (const k of pinned) if (base.params[k] !== undefined) out[k] = base.params[k];
  return out;
}
