// Registers (or updates) a campaign from its spec and returns the loop settings the workflow needs.
import crypto from 'node:crypto';
import { loopSettings, type LoopSettings } from '../../core/loop-settings';
import { InvalidSpecError, parseSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { campaigns } from '../../db/schema';
import { loadCampaignSpec } from './load-campaign';
import type { RegisterCampaignInput } from '../../contracts/campaign';

export async function registerCampaign(db: Db, input: RegisterCampaignInput): Promise<LoopSettings> {
  if (input.spec === undefined) return loopSettings(await loadCampaignSpec(db, input.campaignId));
  const spec = parseSpec(input.spec);
  if (spec.name !== input.campaignId) {
    throw new InvalidSpecError([`name: "${spec.name}" does not match the campaign id "${input.campaignId}"`]);
  }
  const specHash = crypto.createHash('sha256').update(JSON.stringify(spec)).digest('hex');
  await db
    .insert(campaigns)
    .values({ id: spec.name, spec, specHash })
    .onConflictDoUpdate({ target: campaigns.id, set: { spec, specHash } });
  return loopSettings(spec);
}
