// The campaign a command acts on: the spec given with --spec (validated, its size checked, a custom task's dataset
// and suite pinned, and its version id computed, nothing written; its name must be the campaign id), else the
// campaign's latest registered version. An unknown campaign is a usage error, found before anything is started.
import { NotFoundError } from '../core/errors';
import type { CampaignSpec } from '../core/spec';
import type { Db } from '../db/client';
import { loadCampaignSpec } from '../services/campaigns/load-campaign';
import { pinnedCampaignVersionOf } from '../services/campaigns/campaign-versions';
import { UsageError } from './errors';
import { loadSpecFile } from './spec-file';

export interface RequiredCampaign {
  spec: CampaignSpec;
  /** The version `--spec` makes (`<name>@<hash>`), to register once the command is sure to go ahead; absent without --spec. */
  versionId?: string;
}

export async function requireCampaign(db: Db, campaignId: string, specFile?: string): Promise<RequiredCampaign> {
  if (specFile !== undefined) {
    const loaded = loadSpecFile(specFile);
    if (loaded.name !== campaignId) throw new UsageError(`${specFile} is the spec of campaign "${loaded.name}", not "${campaignId}"`);
    const { spec, versionId } = await pinnedCampaignVersionOf(db, loaded, specFile);
    return { spec, versionId };
  }
  try {
    return { spec: await loadCampaignSpec(db, campaignId) };
  } catch (err) {
    if (err instanceof NotFoundError)
      throw new UsageError(
        `unknown campaign "${campaignId}": give its spec with --spec FILE (or start it once with \`flywheel run SPEC\`)`,
      );
    throw err;
  }
}
