// The sampler's warm start across inner loops: the campaign's earlier trials of the same search space (other
// loops, any dataset version), so a new loop neither re-draws the start-up configurations that did badly last time
// nor repeats a configuration the campaign already ran.
import { validateParams, type Trial } from '../../core/sampler';
import type { SearchSpace } from '../../core/spec';
import type { Db } from '../../db/client';
import { campaignTrials } from '../../services/inner-loops';

/** Earlier trials kept, the most recent: TPE's age weights fade older ones anyway, and this bounds its cost. */
const MAX_EARLIER_TRIALS = 2000;

export interface EarlierTrials {
  /** Oldest first, to go before the loop's own trials in the sampler's history. */
  trials: Trial[];
  /** The loops they came from, oldest first. */
  loops: string[];
}

/**
 * Trials of `campaignId` outside `innerLoopId` whose params set every knob of `space` within its range (the same
 * space; a knob since removed from the space is ignored). Their scores were measured on other dataset versions,
 * which is why they come first: the model weighs the loop's own trials as the most recent. Only succeeded and
 * pruned/failed runs inform the model; a proposed or cancelled one is still a configuration the campaign has seen.
 */
export async function earlierTrials(
  db: Db,
  campaignId: string,
  innerLoopId: string,
  space: SearchSpace,
  mode: 'min' | 'max',
): Promise<EarlierTrials> {
  const rows = await campaignTrials(db, campaignId, innerLoopId);
  const sign = mode === 'min' ? 1 : -1;
  const knobs = Object.keys(space);
  const same = rows.filter(
    (r) => validateParams(space, Object.fromEntries(knobs.map((k) => [k, r.params[k]]).filter(([, v]) => v !== undefined))).length === 0,
  );
  const kept = same.slice(-MAX_EARLIER_TRIALS);
  const loops: string[] = [];
  for (const r of kept) if (!loops.includes(r.innerLoopId)) loops.push(r.innerLoopId);
  return {
    trials: kept.map((r) => ({
      params: r.params,
      value: r.publicScore === null ? undefined : sign * r.publicScore,
      state: earlierState(r.status, r.publicScore),
    })),
    loops,
  };
}

/** A run of another loop that never finished tells the model nothing, but stays a seen configuration. */
function earlierState(status: string, publicScore: number | null): Trial['state'] {
  if (status === 'succeeded' && publicScore !== null) return 'finished';
  if (status === 'pruned' || status === 'failed' || status === 'timed_out') return 'pruned';
  return 'failed';
}
