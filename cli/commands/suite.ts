// `flywheel suite add FILE.json|FILE.yaml`, `flywheel suite list`, `flywheel suite show NAME[@N]`: eval suites as
// versioned inputs (core/eval-suite/suite-schema.ts is the format; docs/suites.md). `add` prints `NAME@N` (the same
// content again: the same version; the file's real path is recorded as the suite's source); a file past its caps
// (cli/suite-file.ts) or a malformed suite is one line naming the file and every failing item, exit 2, nothing
// stored. `show` counts held-out items and never prints one: only public and probe items are sampled.
import type { Command } from 'commander';
import { MalformedSuiteError, parseSuite } from '../../core/eval-suite/suite-schema';
import { registerEvalSuite } from '../../services/suites/register-suite';
import { listSuites, showSuite, type SuiteDetail } from '../../services/suites/suite-queries';
import { UsageError } from '../errors';
import { integerOption } from '../integer-option';
import { readSuiteFile } from '../suite-file';
import { withDb } from '../with-db';

export function registerSuite(program: Command): void {
  const suite = program
    .command('suite')
    .description('eval suites: register one from a file (public, held-out and probe items), list them, show one')
    .addHelpText('after', '\nExamples:\n  $ flywheel suite add evals/arith.yaml\n  arith@1\n  $ flywheel suite show arith\n');

  suite
    .command('add')
    .description('register a suite file (JSON or YAML) and print its id NAME@N; the same content again is the same version')
    .argument('<file>', 'the suite file')
    .addHelpText('after', '\nExample:\n  $ flywheel suite add evals/arith.yaml\n  arith@1\n')
    .action(async (file: string) => {
      const { raw, realPath } = readSuiteFile(file);
      // The suite's own problems first, which need no database (registration checks it again).
      try {
        parseSuite(raw);
      } catch (e) {
        if (e instanceof MalformedSuiteError) throw new UsageError(`${file}: ${e.message}`);
        throw e;
      }
      const r = await withDb((db) => registerEvalSuite(db, raw, { sourcePath: realPath })).catch((e: unknown) => {
        if (e instanceof MalformedSuiteError) throw new UsageError(`${file}: ${e.message}`);
        throw e;
      });
      console.log(r.suiteId);
      console.error(`${r.created ? 'registered' : 'already registered'}: ${splits(r.counts)}`);
    });

  suite
    .command('list')
    .description('every suite: its newest version and that version’s items per split')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ flywheel suite list\n  arith@2  2 versions  public 40, heldout 40, probe 12\n')
    .action(async (opts: { json?: boolean }) => {
      const rows = await withDb((db) => listSuites(db));
      if (opts.json) return console.log(JSON.stringify(rows, null, 2));
      if (rows.length === 0) return console.log('no suites registered (flywheel suite add FILE.json)');
      for (const r of rows) console.log(`${r.newest}  ${r.versions} version${r.versions === 1 ? '' : 's'}  ${splits(r.items)}`);
    });

  suite
    .command('show')
    .description('one suite version (NAME: its newest): counts per split, category and grader, and a sample of public and probe items')
    .argument('<ref>', 'NAME or NAME@N')
    .option('--json', 'print JSON')
    .option('--sample <n>', 'public and probe items shown, each', integerOption('--sample', 0, 1000), 3)
    .addHelpText('after', '\nExample:\n  $ flywheel suite show arith@1\n')
    .action(async (ref: string, opts: { json?: boolean; sample: number }) => {
      const d = await withDb((db) => showSuite(db, ref, { sample: opts.sample }));
      if (opts.json) return console.log(JSON.stringify(d, null, 2));
      printSuite(d);
    });
}

const splits = (counts: Record<string, number>) =>
  ['public', 'heldout', 'test', 'probe']
    .filter((s) => counts[s] !== undefined)
    .map((s) => `${s} ${counts[s]}`)
    .join(', ') || 'no items';

const listed = (counts: Record<string, number> | undefined) =>
  Object.entries(counts ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

const clip = (s: string, n = 80) => JSON.stringify(s.length > n ? `${s.slice(0, n)}…` : s);

function printSuite(d: SuiteDetail): void {
  console.log(d.id);
  const sealed = d.bySplit.test ? 'held-out and test items' : d.bySplit.heldout ? 'held-out items' : undefined;
  console.log(`  items: ${splits(d.bySplit)}${sealed ? ` (${sealed} are counted, never shown)` : ''}`);
  console.log(`  canaries: ${d.canaries}, held-out canaries: ${d.heldoutCanaries}`);
  for (const split of ['public', 'heldout', 'test', 'probe']) {
    if (!d.bySplit[split]) continue;
    console.log(`  ${split}: categories ${listed(d.byCategory[split])}; graders ${listed(d.byGrader[split])}`);
  }
  if (d.sample.length === 0) return;
  console.log('  sample (public and probe items only):');
  for (const i of d.sample)
    console.log(`    ${i.id} [${i.split}, ${i.grader}, ${i.category}] ${clip(i.prompt)} → ${clip(i.reference, 40)}`);
}
