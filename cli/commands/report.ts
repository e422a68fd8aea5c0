// `flywheel report CAMPAIGN`: writes the campaign's report to share — a self-contained HTML file and Markdown with
// its plots as SVG files beside it — from the database alone (no Temporal needed).
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { openDb } from '../../db/client';
import { collectReport, reportHtml, reportMarkdown, UnknownCampaignError } from '../../server/dashboard/report';
import { requireDatabaseUrl } from '../../stack/endpoints';
import { UsageError } from '../errors';
import { stepSpinner } from '../step-spinner';

interface ReportOptions {
  /** Folder the files go to (created if missing). @default "." */
  out: string;
  /** Print the written files as JSON on stdout. @default false */
  json?: boolean;
  /** Print the Markdown on stdout instead of writing files. @default false */
  stdout?: boolean;
}

export function registerReport(program: Command): void {
  program
    .command('report')
    .description("write a campaign's report: self-contained HTML (plots inline) and Markdown (plots as SVG files beside it)")
    .argument('<campaign>', 'campaign id')
    .option('--out <dir>', 'folder to write into (created if missing)', '.')
    .option('--json', 'print the written files as JSON')
    .option('--stdout', 'print the Markdown report (plots omitted) on stdout instead of writing files')
    .addHelpText(
      'after',
      '\nExit codes: 0 written, 1 database unreachable or a file could not be written, 2 unknown campaign.\n\nExample:\n  $ flywheel report builtin-demo --out reports/\n  reports/builtin-demo-report.html\n  reports/builtin-demo-report.md\n',
    )
    .action(async (campaignId: string, opts: ReportOptions) => {
      const dbh = openDb(requireDatabaseUrl(resolveConfig(process.env, process.cwd())), { max: 2 });
      const spin = stepSpinner(`report ${campaignId}`);
      try {
        const r = await collectReport(dbh.db, campaignId, (s) => spin.step(s)).catch((e: unknown) => {
          throw e instanceof UnknownCampaignError ? new UsageError(e.message) : e;
        });
        if (opts.stdout) {
          spin.done();
          console.log(reportMarkdown(r, { heldout: '', loops: r.loops.map(() => '') }));
          return;
        }
        spin.step('writing files');
        const base = campaignId.replace(/[^A-Za-z0-9._-]+/g, '_');
        fs.mkdirSync(opts.out, { recursive: true });
        // Only plots with data become files; the Markdown links exactly those.
        const images = {
          heldout: r.heldoutSvg ? `${base}-heldout.svg` : undefined,
          loops: r.loops.map((l, i) => (l.curvesSvg ? `${base}-loop-${i + 1}-curves.svg` : undefined)),
        };
        const files: Record<string, string> = { [`${base}-report.html`]: reportHtml(r), [`${base}-report.md`]: reportMarkdown(r, images) };
        if (images.heldout) files[images.heldout] = r.heldoutSvg!;
        r.loops.forEach((l, i) => {
          const name = images.loops[i];
          if (name) files[name] = l.curvesSvg!;
        });
        const written = Object.entries(files).map(([name, text]) => {
          const file = path.join(opts.out, name);
          fs.writeFileSync(file, text);
          return file;
        });
        spin.done();
        if (opts.json)
          console.log(JSON.stringify({ campaignId, html: written[0], markdown: written[1], images: written.slice(2) }, null, 2));
        else console.log(`${written[0]}\n${written[1]}`);
      } finally {
        spin.done();
        await dbh.close();
      }
    });
}
