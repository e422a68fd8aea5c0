// The trainer a campaign's spec names (`trainer.command`) and its fixed HF objective: what its curves' units depend
// on (core/metric-units.ts).
import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { campaigns } from '../../db/schema';

export async function trainerOfCampaign(db: Db, campaignId: string): Promise<{ command: unknown; objective?: string }> {
  const [r] = await db
    .select({
      command: sql<unknown>`${campaigns.spec}->'trainer'->'command'`,
      objective: sql<string | null>`${campaigns.spec}->'trainer'->'fixed'->>'objective'`,
    })
    .from(campaigns)
    .where(eq(campaigns.id, campaignId));
  return { command: r?.command ?? undefined, objective: r?.objective ?? undefined };
}
