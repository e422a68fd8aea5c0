// The gate's reference model for the held-out leak check: the seed reruns' mean score per item, on held-out and on
// public. A rerun trains on the iteration's dataset version in the sandbox, so it never saw either split; against it,
// a candidate that trained on held-out text gains on held-out what it cannot gain on public (a reference-model
// membership test). Scores only: no item text is read.
import type { Db } from '../../db/client';
import { BLIND_REFERENCE, referenceControlOf, type ReferenceSource } from '../../core/gate/reference-control';
import { loadCampaignVersion } from '../../services/campaigns/campaign-versions';
import { scoresOfCheckpoints } from '../../services/eval-results';
import { checkpointLoops } from '../../services/experiments';
import type { RecordedReference } from './plan-seed-reruns';

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

/** Whose trainer the reruns ran, as their group recorded it (activities/outer/plan-seed-reruns.ts). */
export interface RerunTrainer {
  /** `independent: …` or `blind: …` (core/gate/reference-control.ts). */
  control: string;
  /** Absent for reruns planned before they chose their trainer (they ran the campaign version's). */
  source?: ReferenceSource;
  versionId?: string;
}

/**
 * The trainer the reruns ran: what their group recorded; for reruns planned before the group recorded one, the
 * trainer of the campaign version they pinned (then always the campaign's own). Where reruns disagree, a blind one
 * speaks for all. Undefined for no reruns.
 */
export async function rerunTrainerOf(db: Db, rerunCheckpointIds: readonly string[]): Promise<RerunTrainer | undefined> {
  const rows = await checkpointLoops(db, rerunCheckpointIds);
  if (rows.length === 0) return undefined;
  const recorded = rows.map((r) => (r.loopSummary as { reference?: RecordedReference } | null)?.reference);
  if (recorded.every((r) => r !== undefined)) {
    const chosen = recorded.find((r) => !r.independent) ?? recorded[0];
    return { control: chosen.control, source: chosen.source, versionId: chosen.versionId };
  }
  const versionIds = [...new Set(rows.flatMap((r) => (r.campaignVersionId ? [r.campaignVersionId] : [])))];
  const controls: string[] = [];
  for (const v of versionIds) controls.push(referenceControlOf((await loadCampaignVersion(db, v)).spec.trainer.command));
  return { control: controls.find((c) => c.startsWith(BLIND_REFERENCE)) ?? controls[0] ?? BLIND_REFERENCE };
}
