// How an activity gets the campaign it runs: the version its loop pinned, resolved through the injected
// dependencies (once per process), never by reading and parsing the campaign's row again.
import type { CampaignSpec } from '../core/spec';
import { NotFoundError } from '../core/errors';
import type { Db } from '../db/client';
import { campaignResolver, type CampaignResolver } from '../services/campaigns/campaign-resolver';
import type { ActivityDeps } from './deps';

const fallback = new WeakMap<Db, CampaignResolver>();

/** The injected resolver, or one per database for activities called without it (tests calling them directly). */
export function campaignsOf(deps: ActivityDeps): CampaignResolver {
  if (deps.campaigns) return deps.campaigns;
  let r = fallback.get(deps.db);
  if (!r) fallback.set(deps.db, (r = campaignResolver(deps.db)));
  return r;
}

/** The campaign of an experiment (or inner loop) row: the version it pinned. */
export async function campaignOfRow(deps: ActivityDeps, row: { id: string; campaignVersionId: string | null }): Promise<CampaignSpec> {
  if (!row.campaignVersionId) throw new NotFoundError(`"${row.id}" pins no campaign version (it was not written by a loop)`);
  return campaignsOf(deps).resolve(row.campaignVersionId);
}
