// resolveCampaignVersion: a loop's first activity when its input names a campaign or carries a spec instead of a
// version id (a start from the Temporal UI or `temporal workflow start`): a spec is registered as a campaign version
// (the same path as `flywheel run`), a name becomes its newest version. The loop carries only the id afterwards.
// A spec that does not validate or a campaign that does not exist is a UsageError or NotFoundError: not retried.
import { registerCampaignVersion, resolveVersionRef } from '../../services/campaigns/campaign-versions';
import type { CampaignRef } from '../../contracts/loop-input';
import type { ActivityDeps } from '../deps';

export async function resolveCampaignVersion(deps: ActivityDeps, input: CampaignRef): Promise<{ campaignVersionId: string }> {
  if (input.spec !== undefined) {
    const { versionId } = await registerCampaignVersion(deps.db, input.spec, 'the workflow input\'s "spec"', deps.home);
    return { campaignVersionId: versionId };
  }
  const ref = input.campaignVersionId ?? input.campaignId;
  if (ref === undefined) throw new TypeError('resolveCampaignVersion needs a campaignVersionId, a campaignId or a spec');
  return { campaignVersionId: await resolveVersionRef(deps.db, ref) };
}
