// A campaign's latest registered spec, for what the CLI shows about a campaign by name (loops run their pinned
// version instead: campaign-resolver.ts).
import { NotFoundError } from '../../core/errors';
import type { CampaignSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { latestCampaignVersionId, loadCampaignVersion } from './campaign-versions';

export async function loadCampaignSpec(db: Db, campaignId: string): Promise<CampaignSpec> {
  const latest = await latestCampaignVersionId(db, campaignId);
  if (!latest) throw new NotFoundError(`campaign "${campaignId}" does not exist (run \`flywheel run SPEC\` first)`);
  return (await loadCampaignVersion(db, latest)).spec;
}
