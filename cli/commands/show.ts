// `flywheel show EXPERIMENT` and `flywheel compare A B`: what a model answered on the public split, item by item
// (prompt, reference, output, grade and a word diff), and two experiments or two campaigns' production models side by
// side. Public items only: held-out, probe and test items never leave the eval activity. Reads PostgreSQL only.
import { Option, type Command } from 'commander';
import { inlineDiff } from '../../core/text-diff';
import {
  compareResults,
  publicPredictions,
  resolveSubject,
  type ComparedItem,
  type Comparison,
  type PredictionItem,
  type PublicPredictions,
  type Verdict,
} from '../../services/queries/predictions';
import { UsageError } from '../errors';
import { integerOption } from '../integer-option';
import { withDb } from '../with-db';

const VERDICTS: Verdict[] = ['pass', 'fail', 'loss'];
const CHANGES: ComparedItem['change'][] = ['better', 'worse', 'same'];

interface ShowOptions {
  category?: string;
  verdict?: Verdict;
  change?: ComparedItem['change'];
  limit: number;
  json?: boolean;
}

export function registerShow(program: Command): void {
  program
    .command('show')
    .description("an experiment's answers on the public split: each item's prompt, reference, output, grade and a word diff")
    .argument('<experiment>', 'experiment id, e.g. builtin-demo/outer/i1/inner/e3')
    .option('--category <name>', 'only the items of this category')
    .addOption(new Option('--verdict <v>', 'only pass, fail (less than full marks) or loss (bits-per-byte) items').choices(VERDICTS))
    .option('--limit <n>', 'items to print (0: all)', integerOption('--limit', 0), 50)
    .option('--json', 'print every matching item as JSON')
    .addHelpText(
      'after',
      '\nHeld-out and test items are never shown.\nExit codes: 0 printed, 1 database unreachable, 2 unknown experiment or bad option.\n\nExample:\n  $ flywheel show builtin-demo/outer/i1/inner/e3 --verdict fail\n',
    )
    .action(async (experimentId: string, opts: ShowOptions) => {
      const out = await withDb(async (db) => {
        const subject = await resolveSubject(db, experimentId);
        if (!subject || !('experimentId' in subject)) throw new UsageError(`no experiment "${experimentId}"`);
        return publicPredictions(db, subject, { category: opts.category, verdict: opts.verdict });
      });
      if (opts.json) console.log(JSON.stringify(out ?? null, null, 2));
      else console.log((out ? formatPredictions(out, opts.limit) : [`${experimentId}: no public eval result yet`]).join('\n'));
    });

  program
    .command('compare')
    .description(
      'two experiments, or two campaigns’ production models, item by item on the public split: what B gets right or wrong that A did not',
    )
    .argument('<a>', 'an experiment id, or a campaign name (its production model)')
    .argument('<b>', 'the same, compared against A')
    .option('--category <name>', 'only the items of this category')
    .addOption(new Option('--change <c>', 'only better (B passes where A fails), worse or same items').choices(CHANGES))
    .option('--limit <n>', 'items to print (0: all)', integerOption('--limit', 0), 50)
    .option('--json', 'print every matching item as JSON')
    .addHelpText(
      'after',
      '\nHeld-out and test items are never shown.\nExit codes: 0 printed, 1 database unreachable, 2 unknown experiment or campaign, no public result, or bad option.\n\nExample:\n  $ flywheel compare builtin-demo/outer/i1/inner/e3 builtin-demo/outer/i1/inner/e7 --change worse\n',
    )
    .action(async (a: string, b: string, opts: ShowOptions) => {
      const c = await withDb(async (db) => {
        const sides: PublicPredictions[] = [];
        for (const name of [a, b]) {
          const subject = await resolveSubject(db, name);
          if (!subject) throw new UsageError(`no experiment, nor campaign with a production model, "${name}"`);
          const p = await publicPredictions(db, subject, { category: opts.category });
          if (!p) throw new UsageError(`"${name}" has no public eval result yet`);
          sides.push(p);
        }
        return compareResults(sides[0], sides[1], { category: opts.category, change: opts.change });
      });
      console.log(opts.json ? JSON.stringify(c, null, 2) : formatComparison(c, { a, b }, opts.limit).join('\n'));
    });
}

const indent = (label: string, text: string | undefined) => {
  const lines = (text ?? '–').split('\n');
  return lines.map((l, i) => `    ${i === 0 ? label.padEnd(10) : ' '.repeat(10)} ${l}`);
};
const gradeOf = (i: PredictionItem) =>
  i.verdict === 'loss' ? `${i.score ?? '–'} bits/byte` : `${i.verdict.toUpperCase()} (${i.score ?? '–'})`;
const shortId = (id: string, suiteId: string) => (id.startsWith(`${suiteId}/`) ? id.slice(suiteId.length + 1) : id);
const more = (shown: number, total: number) => (shown < total ? [`… ${total - shown} more: --limit 0 prints all`] : []);

/** The text view of `flywheel show`: a header, then each item's grade, prompt, reference, output and diff. */
export function formatPredictions(p: PublicPredictions, limit: number): string[] {
  const items = limit > 0 ? p.items.slice(0, limit) : p.items;
  const out = [
    `${p.experimentId}: checkpoint ${p.checkpointId} on ${p.suiteId}, public split (held-out and test items are never shown)`,
    `${p.items.length} item${p.items.length === 1 ? '' : 's'} match; categories: ${p.categories.join(', ') || '–'}`,
  ];
  if (!p.outputsStored) out.push('this result was scored before outputs were kept: grades and references only');
  for (const i of items) {
    out.push('', `  ${gradeOf(i)}  ${shortId(i.id, p.suiteId)} [${i.category}]${i.error ? `  (${i.error})` : ''}`);
    out.push(...indent('prompt', i.prompt), ...indent('reference', i.reference));
    if (i.verdict !== 'loss') out.push(...indent('output', i.output));
    if (i.verdict === 'fail' && i.output !== undefined)
      out.push(...indent('diff', inlineDiff(i.reference, i.output) ?? '(too long to diff)'));
  }
  return [...out, ...more(items.length, p.items.length)];
}

/** The text view of `flywheel compare`: the two sides, the counts of what changed, then each item's A and B. */
export function formatComparison(c: Comparison, names: { a: string; b: string }, limit: number): string[] {
  const items = limit > 0 ? c.items.slice(0, limit) : c.items;
  const count = (k: ComparedItem['change']) => c.items.filter((i) => i.change === k).length;
  const out = [
    `A ${names.a}: checkpoint ${c.a.checkpointId}, public pass_rate ${c.a.metrics.pass_rate ?? '–'}`,
    `B ${names.b}: checkpoint ${c.b.checkpointId}, public pass_rate ${c.b.metrics.pass_rate ?? '–'}`,
    `${c.items.length} shared public item${c.items.length === 1 ? '' : 's'} match: ${count('better')} better, ${count('worse')} worse, ${count('same')} same (held-out and test items are never shown)`,
  ];
  for (const i of items) {
    out.push('', `  ${i.change.toUpperCase()}  ${shortId(i.id, c.a.suiteId)} [${i.category}]  A ${gradeOf(i.a)} → B ${gradeOf(i.b)}`);
    out.push(...indent('reference', i.reference));
    if (i.a.verdict !== 'loss') out.push(...indent('A', i.a.output), ...indent('B', i.b.output));
    if (i.a.output !== undefined && i.b.output !== undefined && i.a.output !== i.b.output)
      out.push(...indent('A → B', inlineDiff(i.a.output, i.b.output) ?? '(too long to diff)'));
  }
  return [...out, ...more(items.length, c.items.length)];
}
