// The gate's category anchor (core/gate/category-anchor.ts) and its held-out scores: `promotion.anchor`, else the
// campaign's first promoted checkpoint (scored on held-out at its own gate), else the incumbent. An anchor with no
// held-out result on this suite (a suite version it was never scored on) gives way to the incumbent, and says so.
import { wantedAnchor, type CategoryAnchor } from '../../core/gate/category-anchor';
import type { Db } from '../../db/client';
import { splitScores } from '../../services/eval-results';
import { firstPromotedCheckpointOf } from '../../services/outer-iterations';

export interface LoadedAnchor {
  anchor: CategoryAnchor;
  /** The anchor's held-out score per item id; absent when the anchor is the incumbent (its scores are the pair's). */
  perItem?: Record<string, number>;
}

export async function loadCategoryAnchor(
  db: Db,
  at: { campaignId: string; suiteId: string; incumbentCheckpointId: string; setting?: string },
): Promise<LoadedAnchor> {
  const wanted = wantedAnchor(at.setting, await firstPromotedCheckpointOf(db, at.campaignId), at.incumbentCheckpointId);
  if (wanted.checkpointId === at.incumbentCheckpointId) return { anchor: wanted };
  const row = await splitScores(db, wanted.checkpointId, at.suiteId, 'heldout');
  if (row) return { anchor: wanted, perItem: row.perItem };
  return { anchor: fallback(wanted, at.incumbentCheckpointId, `it has no held-out result on suite "${at.suiteId}"`) };
}

/** The incumbent in the wanted anchor's place, with the reason. */
export function fallback(wanted: CategoryAnchor, incumbent: string, why: string): CategoryAnchor {
  return {
    checkpointId: incumbent,
    source: 'incumbent',
    fallback: `the ${wanted.source === 'setting' ? 'pinned anchor (promotion.anchor)' : 'first promotion'} "${wanted.checkpointId}" is not used: ${why}; categories are bounded against the incumbent`,
  };
}
