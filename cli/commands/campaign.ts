// `flywheel campaign versions NAME` and `flywheel campaign diff A B`: a campaign's immutable versions (`<name>@<hash>`,
// one per distinct spec registered), the loops that ran each, and what changed between two. Reads PostgreSQL only.
import type { Command } from 'commander';
import { NotFoundError } from '../../core/errors';
import {
  listCampaignVersions,
  loadCampaignVersion,
  resolveVersionRef,
  type VersionListing,
} from '../../services/campaigns/campaign-versions';
import { diffSpecs, formatChange } from '../../services/campaigns/spec-diff';
import { withDb } from '../with-db';

export function registerCampaign(program: Command): void {
  const campaign = program
    .command('campaign')
    .description("a campaign's versions: one per distinct spec registered, immutable; a loop runs the version it started with")
    .addHelpText(
      'after',
      '\nExamples:\n  $ flywheel campaign versions builtin-demo\n  $ flywheel campaign diff builtin-demo@1a2b3c4d5e6f builtin-demo\n',
    );

  campaign
    .command('versions')
    .description('list the versions of a campaign, newest first, with the loops that ran each')
    .argument('<campaign>', 'campaign id (the spec name)')
    .option('--json', 'print the list as JSON')
    .addHelpText('after', '\nExample:\n  $ flywheel campaign versions builtin-demo\n')
    .action(async (campaignId: string, opts: { json?: boolean }) =>
      withDb(async (db) => {
        const versions = await listCampaignVersions(db, campaignId);
        if (versions.length === 0)
          throw new NotFoundError(`unknown campaign "${campaignId}": no version registered (\`flywheel run SPEC\` registers one)`);
        console.log(opts.json ? JSON.stringify(versions, null, 2) : formatVersions(versions).join('\n'));
      }),
    );

  campaign
    .command('diff')
    .description('what changed from version A to version B, one `path: old → new` line per field')
    .argument('<a>', 'a version id (NAME@HASH, or a prefix of the hash), or NAME for the latest')
    .argument('<b>', 'the same, for the other side')
    .addHelpText('after', '\nExample:\n  $ flywheel campaign diff builtin-demo@1a2b3c4d5e6f builtin-demo\n')
    .action(async (a: string, b: string) =>
      withDb(async (db) => {
        const [va, vb] = [
          await loadCampaignVersion(db, await resolveVersionRef(db, a)),
          await loadCampaignVersion(db, await resolveVersionRef(db, b)),
        ];
        const changes = diffSpecs(va.spec, vb.spec);
        console.log([`--- ${va.id}`, `+++ ${vb.id}`, ...(changes.length ? changes.map(formatChange) : ['no differences'])].join('\n'));
      }),
    );
}

export function formatVersions(rows: VersionListing[]): string[] {
  const head = ['version', 'created (UTC)', 'latest', 'inner loops', 'outer iterations'];
  const list = (ids: string[]) =>
    ids.length === 0 ? '–' : ids.length <= 2 ? ids.join(', ') : `${ids.slice(-2).join(', ')} (+${ids.length - 2} more)`;
  const cells = rows.map((v) => [
    v.id,
    v.createdAt.toISOString().slice(0, 19).replace('T', ' '),
    v.latest ? 'yes' : '',
    list(v.innerLoops),
    list(v.outerIterations),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(head), ...cells.map(line)];
}
