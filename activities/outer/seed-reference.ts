// The gate's reference model for the held-out leak check: the seed reruns' mean score per item, on held-out and on
// public. A rerun trains on the iteration's dataset version in the sandbox, so it never saw either split; against it,
// a candidate that trained on held-out text gains on held-out what it cannot gain on public (a reference-model
// membership test). Scores only: no item text is read.
import type { Db } from '../../db/client';
import { scoresOfCheckpoints } from '../../services/eval-results';

export interface SeedReference {
  /** Reruns scored on both splits, whose scores the means average. */
  reruns: number;
  /** Per held-out item id: the reruns' mean score (only items every such rerun scored). */
  heldout: Record<string, number>;
  /** Per public item id, likewise. */
  public: Record<string, number>;
}

/** The seed reruns' per-item means, from the reruns scored on both held-out and public; undefined when none is. */
export async function loadSeedReference(
  db: Db,
  suiteId: string,
  rerunCheckpointIds: readonly string[],
): Promise<SeedReference | undefined> {
  if (rerunCheckpointIds.length === 0) return undefined;
  const rows = await scoresOfCheckpoints(db, suiteId, rerunCheckpointIds, ['heldout', 'public']);
  const of = (c: string, split: string) => rows.find((r) => r.checkpointId === c && r.split === split)?.perItem;
  const both = rerunCheckpointIds.flatMap((c) => {
    const h = of(c, 'heldout');
    const p = of(c, 'public');
    return h && p ? [{ heldout: h, public: p }] : [];
  });
  if (both.length === 0) return undefined;
  return { reruns: both.length, heldout: meanPerItem(both.map((b) => b.heldout)), public: meanPerItem(both.map((b) => b.public)) };
}

/** The mean per item over `results`, for the items every one of them scored. */
function meanPerItem(results: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const id of Object.keys(results[0])) {
    const values = results.map((r) => r[id]);
    if (values.every((v) => v !== undefined)) out[id] = values.reduce((s, v) => s + v, 0) / values.length;
  }
  return out;
}
