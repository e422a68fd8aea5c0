// The outer loop's warm start, as the inner loop's activities see it: the checkpoint every experiment starts
// from, its file, and the configuration of the experiment that trained it (whose model-shape knobs are pinned).
import { NotFoundError } from '../../core/errors';
import type { Params } from '../../core/spec';
import type { Db } from '../../db/client';
import { baseCheckpointOfLoop, checkpointExperiment } from '../../services/inner-loops';

export interface WarmStart {
  checkpointId: string;
  /** The checkpoint file, given to the trainer as run.json `baseCheckpoint`. */
  path: string;
  /** The params of the experiment that produced it. */
  params: Params;
}

export async function warmStartOfCheckpoint(db: Db, checkpointId: string): Promise<WarmStart> {
  const row = await checkpointExperiment(db, checkpointId);
  if (!row) throw new NotFoundError(`warm-start checkpoint "${checkpointId}" does not exist`);
  return { checkpointId, path: row.path, params: row.params };
}

/** The warm start of an inner loop, or null when its experiments start from scratch. */
export async function warmStartOfLoop(db: Db, innerLoopId: string): Promise<WarmStart | null> {
  const base = await baseCheckpointOfLoop(db, innerLoopId);
  return base ? warmStartOfCheckpoint(db, base) : null;
}

/** `params` with the pinned knobs set to the warm start's values (knobs the base did not set are left alone). */
export function pinKnobs(params: Params, base: WarmStart, pinned: readonly string[]): Params {
  const out: Params = { ...params };
  for (const k of pinned) if (base.params[k] !== undefined) out[k] = base.params[k];
  return out;
}
