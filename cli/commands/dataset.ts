// `flywheel dataset add|list|show`: a team's own training data as versioned, content-addressed inputs (docs/datasets.md).
// Reads and writes PostgreSQL only (DATABASE_URL or the running stack's) and FLYWHEEL_HOME, so it works without Temporal.
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { listDatasets, showDataset, type DatasetListRow, type DatasetVersionDetail } from '../../services/datasets/dataset-queries';
import { checkDatasetFile, registerDataset as addDataset, type RegisterProgress } from '../../services/datasets/register-dataset';
import { NoStackError } from '../../stack/endpoints';
import { withDb } from '../with-db';

export function registerDataset(program: Command): void {
  const dataset = program
    .command('dataset')
    .description('training datasets of your own: register a JSONL file as a version, list them, show one')
    .addHelpText('after', '\nExample:\n  $ flywheel dataset add support data/support.jsonl\n  support@3f2a9c01b7de\n');

  dataset
    .command('add')
    .description(
      'check every line of FILE.jsonl, then register it as a version of NAME and print NAME@<version> (the same content gives the same version)',
    )
    .argument('<name>', 'the dataset: lowercase letters, digits and ._-')
    .argument(
      '<file>',
      'JSONL: {"prompt","completion","category"?,"weight"?} or {"messages":[{role,content}],"category"?,"weight"?} a line',
    )
    .addHelpText('after', '\nExample:\n  $ flywheel dataset add support data/support.jsonl\n  support@3f2a9c01b7de\n')
    .action(async (name: string, file: string) => {
      const config = resolveConfig(process.env, process.cwd());
      // On a terminal: a progress bar and a summary, on stderr. Elsewhere the version id is the only output.
      const tty = process.stderr.isTTY === true;
      const bar = tty ? progressBar() : undefined;
      try {
        const r = await withDb((db) => addDataset(db, name, file, { home: config.home, onProgress: bar?.update })).catch(
          async (e: unknown) => {
            // No stack: the file's own problems first (FILE:LINE, exit 2), which need no database; then the missing stack.
            if (e instanceof NoStackError) await checkDatasetFile(file);
            throw e;
          },
        );
        bar?.stop();
        console.log(r.versionId);
        if (!tty) return;
        const cats = Object.entries(r.byCategory)
          .map(([c, n]) => `${c} ${n}`)
          .join(', ');
        console.error(
          `${r.created ? 'registered' : 'already registered'}: ${r.examples} examples (${cats})${r.duplicates ? `; ${r.duplicates} duplicate lines collapsed` : ''}`,
        );
      } finally {
        bar?.stop();
      }
    });

  dataset
    .command('list')
    .description('the registered datasets: versions, the newest, its examples, when the dataset was first registered')
    .option('--json', 'print the list as JSON')
    .addHelpText('after', '\nExample:\n  $ flywheel dataset list\n')
    .action(async (opts: { json?: boolean }) => {
      const rows = await withDb((db) => listDatasets(db));
      console.log(opts.json ? JSON.stringify({ datasets: rows }, null, 2) : formatDatasetList(rows).join('\n'));
    });

  dataset
    .command('show')
    .description('one version (NAME is its newest): examples per category, a sample of train.jsonl, parents and derived versions')
    .argument('<ref>', 'NAME, NAME@<version>, or a version id a campaign derived')
    .option('--json', 'print it as JSON')
    .addHelpText('after', '\nExample:\n  $ flywheel dataset show support\n')
    .action(async (ref: string, opts: { json?: boolean }) => {
      const d = await withDb((db) => showDataset(db, ref));
      console.log(opts.json ? JSON.stringify(d, null, 2) : formatDatasetVersion(d).join('\n'));
    });
}

/** One bar over both passes (checking, then loading; then `store` at the end), on stderr; `update` is the registration's progress callback. */
function progressBar(): { update: (p: RegisterProgress) => void; stop: () => void } {
  const bar = new SingleBar({ format: '{phase} [{bar}] {percentage}% | {lines} lines', stream: process.stderr, clearOnComplete: true });
  let started = false;
  return {
    update: (p) => {
      const value = (p.phase === 'check' ? 0 : p.totalBytes) + p.bytes;
      if (!started) bar.start(Math.max(1, 2 * p.totalBytes), value, { phase: p.phase, lines: p.lines });
      else bar.update(value, { phase: p.phase, lines: p.lines });
      started = true;
    },
    stop: () => {
      if (started) bar.stop();
      started = false;
    },
  };
}

export function formatDatasetList(rows: DatasetListRow[]): string[] {
  if (rows.length === 0) return ['no datasets yet: `flywheel dataset add NAME FILE.jsonl` registers one'];
  const head = ['dataset', 'versions', 'newest version', 'examples', 'created (UTC)'];
  const cells = rows.map((d) => [
    d.name,
    String(d.versions),
    d.newest_version ?? '–',
    String(d.examples),
    new Date(d.created_at).toISOString().slice(0, 16).replace('T', ' '),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i].length)));
  return [head, ...cells].map((r) =>
    r
      .map((v, i) => v.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

export function formatDatasetVersion(d: DatasetVersionDetail): string[] {
  const width = Math.max(0, ...Object.keys(d.byCategory).map((c) => c.length));
  return [
    `${d.versionId}  ${d.examples} examples${d.campaignId ? ` (derived by campaign ${d.campaignId})` : ''}, created ${new Date(d.createdAt).toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    `sources: ${Object.entries(d.countsBySource)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')}`,
    'per category:',
    ...Object.entries(d.byCategory).map(([c, n]) => `  ${c.padEnd(width)}  ${n}`),
    `parents: ${d.parents.length ? d.parents.join(', ') : 'none (a base version)'}`,
    `derived: ${d.children.length ? d.children.join(', ') : 'none'}`,
    `files: ${d.path}`,
    'sample (train.jsonl):',
    ...d.sample.map((l) => `  ${l}`),
  ];
}
