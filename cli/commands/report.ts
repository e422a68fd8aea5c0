// `flywheel report CAMPAIGN`: a plain-text (Markdown) report of a campaign read from PostgreSQL. For now one section,
// the promotion gate's decisions with every check's figures (cli/report-gate-section.ts).
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { openDb } from '../../db/client';
import { campaigns } from '../../db/schema';
import { requireDatabaseUrl } from '../endpoints';
import { UsageError } from '../errors';
import { gateDecisionsSection } from '../report-gate-section';
import { eq } from 'drizzle-orm';

export function registerReport(program: Command): void {
  program
    .command('report')
    .description("a campaign's report as Markdown: the promotion gate's decisions, each check with its figures")
    .argument('<campaign>', 'campaign id')
    .action(async (campaignId: string) => {
      const dbh = openDb(requireDatabaseUrl(resolveConfig(process.env, process.cwd())), { max: 1 });
      try {
        const [c] = await dbh.db.select({ id: campaigns.id }).from(campaigns).where(eq(campaigns.id, campaignId));
        if (!c) throw new UsageError(`no campaign "${campaignId}"`);
        console.log((await gateDecisionsSection(dbh.db, campaignId)).join('\n'));
      } finally {
        await dbh.close();
      }
    });
}
