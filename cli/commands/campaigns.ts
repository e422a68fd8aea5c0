// `flywheel campaigns`: every campaign in the database, newest first, with its loops, experiments and production
// model. Reads PostgreSQL only (DATABASE_URL or the running stack's), so it works without Temporal.
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { openDb } from '../../db/client';
import { countCampaigns, listCampaigns, type CampaignRow } from '../../services/queries/campaigns';
import { requireDatabaseUrl } from '../../stack/endpoints';
import { integerOption } from '../integer-option';

export function registerCampaigns(program: Command): void {
  program
    .command('campaigns')
    .description('list the campaigns: inner and outer loops, experiments (untrained baselines not counted), running, production checkpoint')
    .option('--json', 'print the list as JSON')
    .option('--limit <n>', 'campaigns to list', integerOption('--limit', 1), 50)
    .option('--offset <n>', 'campaigns to skip (the next page)', integerOption('--offset', 0), 0)
    .addHelpText('after', '\nExample:\n  $ flywheel campaigns\n')
    .action(async (opts: { json?: boolean; limit: number; offset: number }) => {
      const dbh = openDb(requireDatabaseUrl(resolveConfig(process.env, process.cwd())), { max: 1 });
      try {
        const [rows, total] = await Promise.all([listCampaigns(dbh.db, opts.limit, opts.offset), countCampaigns(dbh.db)]);
        if (opts.json) console.log(JSON.stringify({ total, campaigns: rows }, null, 2));
        else console.log(formatCampaigns(rows, total, opts.offset).join('\n'));
      } finally {
        await dbh.close();
      }
    });
}

export function formatCampaigns(rows: CampaignRow[], total: number, offset = 0): string[] {
  if (total === 0) return ['no campaigns yet: `flywheel run SPEC` or `flywheel demo` starts one'];
  const head = ['campaign', 'created (UTC)', 'inner', 'outer', 'experiments', 'running', 'last outer', 'production checkpoint'];
  const cells = rows.map((c) => [
    c.id,
    new Date(c.created_at).toISOString().slice(0, 16).replace('T', ' '),
    String(c.inner_loops),
    String(c.outer_iterations),
    String(c.experiments),
    String(c.running),
    c.last_outer_status ?? '–',
    c.production_checkpoint_id ?? '–',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  const out = [line(head), ...cells.map(line)];
  out.push(
    `${rows.length ? `${offset + 1}–${offset + rows.length}` : 'none'} of ${total} campaigns; experiments exclude each inner loop's untrained baseline${offset + rows.length < total ? `; --offset ${offset + rows.length} for more` : ''}`,
  );
  return out;
}
