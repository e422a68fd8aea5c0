// How an activity gets the campaign it runs: the version its loop pinned, resolved through the injected
// dependencies (once per process), never by reading and parsing the campaign's row again.
import type { CampaignSpec } from '../core/spec';
import { NotFoundError } from '../core/errors';
import { campaignsOf, type ActivityDeps } from './deps';

/** The campaign of an experiment (or inner loop) row: the version it pinned. */
export async function campaignOfRow(deps: ActivityDeps, row: { id: string; campaignVersionId: string | null }): Promise<CampaignSpec> {
  if (!row.campaignVersionId) throw new NotFoundError(`"${row.id}" pins no campaign version (it was not written by a loop)`);
  return campaignsOf(deps).resolve(row.campaignVersionId);
}
