// The campaign version the gate's seed reruns run when their trainer is not the campaign's (core/gate/reference-control.ts):
// the campaign version's spec with its trainer block replaced, registered as an immutable, content-addressed version
// `<name>@ref-<hash>`. It is never the campaign's latest: nothing but the reruns' experiments pins it, `flywheel run`
// never registers it, and the `ref-` mark on its hash tells it apart in `flywheel campaign versions` (no column needed).
import type { CampaignSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { campaignVersions } from '../../db/schema';
import type { TrainerBlock } from '../../core/gate/reference-control';
import { campaignVersionOf, canonicalJson } from './campaign-versions';

/** What a reference version's hash (and so its id, after the `@`) starts with. */
export const REFERENCE_VERSION_MARK = 'ref-';

/**
 * The version the reruns run for `trainer`: the campaign's own (`versionId`) when the block is the spec's, else the
 * derived reference version, registered once (a second gate finds it). Validated as any spec is: InvalidSpecError
 * when the spec refuses that trainer (a gate metric it cannot score, say).
 */
export async function referenceVersionOf(
  db: Db,
  of: { versionId: string; spec: CampaignSpec },
  trainer: TrainerBlock,
): Promise<{ versionId: string; spec: CampaignSpec }> {
  const derived = campaignVersionOf({ ...of.spec, trainer }, `the seed reruns' version of "${of.versionId}"`);
  if (canonicalJson(derived.spec.trainer) === canonicalJson(of.spec.trainer)) return of;
  const hash = `${REFERENCE_VERSION_MARK}${derived.hash}`;
  const versionId = `${derived.spec.name}@${hash}`;
  // No campaigns row is touched: its latest version stays the one a person registered.
  await db
    .insert(campaignVersions)
    .values({ id: versionId, campaignId: derived.spec.name, hash, spec: derived.spec })
    .onConflictDoNothing();
  return { versionId, spec: derived.spec };
}
