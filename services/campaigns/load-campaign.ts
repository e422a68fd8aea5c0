// Reading a campaign's stored spec: the one place activities turn a campaign id into a CampaignSpec.
import { eq } from 'drizzle-orm';
import { NotFoundError } from '../../core/errors';
import { parseSpec, type CampaignSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { campaigns } from '../../db/schema';

export async function loadCampaignSpec(db: Db, campaignId: string): Promise<CampaignSpec> {
  const rows = await db.select({ spec: campaigns.spec }).from(campaigns).where(eq(campaigns.id, campaignId));
  if (rows.length === 0) throw new NotFoundError(`campaign "${campaignId}" does not exist (run \`flywheel run SPEC\` first)`);
  return parseSpec(rows[0].spec, `campaign "${campaignId}"`);
}
