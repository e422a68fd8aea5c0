// The campaign an activity runs, by its pinned version id: read and validated once per process. Safe to keep,
// because a version never changes once registered.
import type { CampaignSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { loadCampaignVersion } from './campaign-versions';

export interface CampaignResolver {
  /** The parsed spec of a version (NotFoundError for an unknown one). */
  resolve(campaignVersionId: string): Promise<CampaignSpec>;
}

export function campaignResolver(db: Db): CampaignResolver {
  const memo = new Map<string, Promise<CampaignSpec>>();
  return {
    resolve(id) {
      let spec = memo.get(id);
      if (!spec) {
        spec = loadCampaignVersion(db, id).then((v) => v.spec);
        // A failed read (a version not yet visible, a dropped connection) is not remembered.
        void spec.catch(() => memo.delete(id));
        memo.set(id, spec);
      }
      return spec;
    },
  };
}
