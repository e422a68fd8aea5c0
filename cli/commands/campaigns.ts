// `flywheel campaigns`: every campaign in the database, newest first, one line each: its experiments, its production
// model with that model's held-out and sealed test scores, and the last gate decision. Reads PostgreSQL only
// (DATABASE_URL or the running stack's), so it works without Temporal.
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { openDb } from '../../db/client';
import { campaignScoresOf, type CampaignScores } from '../../services/queries/campaign-scores';
import { countCampaigns, listCampaigns, type CampaignRow } from '../../services/queries/campaigns';
import { requireDatabaseUrl } from '../../stack/endpoints';
import { integerOption } from '../integer-option';

export type ListedCampaign = CampaignRow & CampaignScores;

export function registerCampaigns(program: Command): void {
  program
    .command('campaigns')
    .description(
      'list the campaigns: experiments (untrained baselines not counted), production checkpoint, its held-out and sealed test scores, the last gate decision',
    )
    .option('--json', 'print the list as JSON (with the inner and outer loop counts)')
    .option('--limit <n>', 'campaigns to list', integerOption('--limit', 1), 50)
    .option('--offset <n>', 'campaigns to skip (the next page)', integerOption('--offset', 0), 0)
    .addHelpText('after', '\nExample:\n  $ flywheel campaigns\n')
    .action(async (opts: { json?: boolean; limit: number; offset: number }) => {
      const dbh = openDb(requireDatabaseUrl(resolveConfig(process.env, process.cwd())), { max: 1 });
      try {
        const [rows, total] = await Promise.all([listCampaigns(dbh.db, opts.limit, opts.offset), countCampaigns(dbh.db)]);
        const listed: ListedCampaign[] = [];
        for (const c of rows) listed.push({ ...c, ...(await campaignScoresOf(dbh.db, c.id)) });
        if (opts.json) console.log(JSON.stringify({ total, campaigns: listed }, null, 2));
        else console.log(formatCampaigns(listed, total, opts.offset).join('\n'));
      } finally {
        await dbh.close();
      }
    });
}

/** A production checkpoint id shown in at most this many characters (its tail: the run and step). */
const PRODUCTION_WIDTH = 22;

/** The id without the campaign's own prefix, its tail when still longer than the column. */
export function shortCheckpoint(id: string | null, campaignId: string): string {
  if (!id) return '–';
  const own = id.startsWith(`${campaignId}/`) ? id.slice(campaignId.length + 1) : id;
  return own.length <= PRODUCTION_WIDTH ? own : `…${own.slice(own.length - PRODUCTION_WIDTH + 1)}`;
}

const score = (v: number | null): string => (v === null ? '–' : v.toFixed(4));

/** One line per campaign (newest first), readable at 100 columns; the full ids, dates and every count are in `--json`. */
export function formatCampaigns(rows: ListedCampaign[], total: number, offset = 0): string[] {
  if (total === 0) return ['no campaigns yet: `flywheel run SPEC` or `flywheel demo` starts one'];
  const head = ['campaign', 'experiments', 'production', 'metric', 'held-out', 'test', 'last gate'];
  const cells = rows.map((c) => [
    c.id,
    `${c.experiments}${c.running ? ` (${c.running} running)` : ''}`,
    shortCheckpoint(c.production_checkpoint_id, c.id),
    c.heldout_metric ?? c.test_metric ?? '–',
    score(c.heldout_production),
    // A test figure on another metric than held-out's is named, so no column mixes two metrics unsaid.
    c.test_metric && c.heldout_metric && c.test_metric !== c.heldout_metric
      ? `${c.test_metric} ${score(c.test_production)}`
      : score(c.test_production),
    c.last_gate ? (c.last_gate.kind === 'promote' ? 'promoted' : c.last_gate.kind === 'hold' ? 'held' : 'rejected') : '–',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const out = [line(head), ...cells.map(line)];
  out.push(
    `${rows.length ? `${offset + 1}–${offset + rows.length}` : 'none'} of ${total} campaigns; experiments exclude untrained baselines; held-out and test: the production model's${offset + rows.length < total ? `; --offset ${offset + rows.length} for more` : ''}`,
  );
  return out;
}
