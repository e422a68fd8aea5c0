// `flywheel lineage CHECKPOINT`: where a checkpoint came from, back to the user feedback behind its training
// examples. Reads PostgreSQL only (DATABASE_URL or the running stack's), so it works without Temporal.
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import { openDb } from '../../db/client';
import { checkpointLineage, type CheckpointLineage, type DatasetVersionSummary } from '../../services/lineage';
import type { ExperimentRecipe } from '../../services/recipe-history';
import { requireDatabaseUrl } from '../../stack/endpoints';
import { UsageError } from '../errors';
import { integerOption } from '../integer-option';

/** Critique and comment texts are cut to this many characters in the text view (JSON has them whole). */
const TEXT_WIDTH = 160;

export function registerLineage(program: Command): void {
  program
    .command('lineage')
    .description(
      "a checkpoint's run, experiment (with its recipe commit and patch) and dataset version, and the critiques and feedback behind its examples",
    )
    .argument('<checkpoint>', 'checkpoint id, e.g. builtin-demo/outer/i1/inner/e3/r1/step-300')
    .option('--json', 'print the lineage as JSON')
    .option('--limit <n>', 'critique-made examples to list', integerOption('--limit', 0), 50)
    .option('--offset <n>', 'critique-made examples to skip (the next page)', integerOption('--offset', 0), 0)
    .addHelpText(
      'after',
      '\nExit codes: 0 printed, 1 database unreachable, 2 unknown checkpoint or bad option.\n\nExample:\n  $ flywheel lineage builtin-demo/outer/i1/inner/e3/r1/step-300 --json\n',
    )
    .action(async (checkpointId: string, opts: { json?: boolean; limit: number; offset: number }) => {
      const dbh = openDb(requireDatabaseUrl(resolveConfig(process.env, process.cwd())), { max: 1 });
      try {
        const lineage = await checkpointLineage(dbh.db, checkpointId, { limit: opts.limit, offset: opts.offset });
        if (!lineage) throw new UsageError(`no checkpoint "${checkpointId}"`);
        console.log(opts.json ? JSON.stringify(lineage, null, 2) : formatLineage(lineage).join('\n'));
      } finally {
        await dbh.close();
      }
    });
}

const cut = (s: string) => JSON.stringify(s.length > TEXT_WIDTH ? `${s.slice(0, TEXT_WIDTH)}…` : s);
const pairs = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';
const version = (v: DatasetVersionSummary) => `${v.id}  (sha256 ${v.contentHash.slice(0, 12)}…; ${pairs(v.countsBySource)})`;

/** Diff lines printed under an experiment; `flywheel recipe show CAMPAIGN@COMMIT --diff` prints the rest. */
const DIFF_LINES = 40;

/** The experiment's recipe commit, its patch's parent and proposer, and the patch itself, indented. */
function recipeLines(r: ExperimentRecipe, campaignId: string): string[] {
  const commit = r.commit ?? '(the pinned commit)';
  if (!r.patch) return [`recipe      commit ${commit}, no patch (knobs only)`];
  const p = r.patch;
  const out = [
    `recipe      commit ${commit}, parent ${p.parent}`,
    `  patch     ${p.id}  ${p.summary || '(no summary)'} by ${p.proposer}, ${p.status}${p.reason ? `: ${cut(p.reason)}` : ''}`,
  ];
  if (p.hypothesis) out.push(`            hypothesis ${cut(p.hypothesis)}`);
  const lines = p.diff.replace(/\n$/, '').split('\n');
  out.push(...lines.slice(0, DIFF_LINES).map((l) => `    | ${l}`));
  if (lines.length > DIFF_LINES)
    out.push(`    … ${lines.length - DIFF_LINES} more lines: flywheel recipe show ${campaignId}@${r.commit ?? p.parent} --diff`);
  return out;
}

/** The text view: one fact per line, the feedback chain indented under its example. */
export function formatLineage(l: CheckpointLineage): string[] {
  const c = l.checkpoint;
  const out = [
    `checkpoint  ${c.id}  step ${c.step}, ${c.format}, sha256 ${c.sha256.slice(0, 12)}…${l.inProductionFor.length ? `, in production for ${l.inProductionFor.join(', ')}` : ''}`,
  ];
  out.push(
    l.run ? `run         ${l.run.id}  attempt ${l.run.attempt} on ${l.run.backend}, ${l.run.status}` : 'run         (no training_runs row)',
  );
  for (const x of l.decisions)
    out.push(`decision    ${x.id}  ${x.kind} by ${x.rule}, ${x.accepted ? 'accepted' : 'not accepted'}: ${cut(x.reason)}`);
  const e = l.experiment;
  if (!e) return [...out, 'experiment  (no experiments row: no dataset to show)'];
  const scores = [e.publicScore !== null ? `public ${e.publicScore}` : '', e.heldoutScore !== null ? `held-out ${e.heldoutScore}` : '']
    .filter(Boolean)
    .join(', ');
  out.push(
    `experiment  ${e.id}  #${e.index} of ${e.innerLoopId}, ${e.status}, by ${e.proposer}${scores ? `, ${scores}` : ''}`,
    `            params ${JSON.stringify(e.params)}`,
  );
  if (l.warmStartFrom) out.push(`            warm-started from ${l.warmStartFrom}`);
  if (e.recipe) out.push(...recipeLines(e.recipe, e.campaignId));
  const d = l.dataset;
  if (!d) return [...out, 'dataset     (the dataset version row is missing)'];
  out.push(
    `dataset     ${version(d.version)}`,
    `            mix ${pairs(d.version.mixWeights)}; loss weights ${pairs(d.version.lossWeights)}`,
  );
  for (const a of d.ancestors) out.push(`  parent    ${version(a)}`);
  for (const id of d.missingAncestors) out.push(`  parent    ${id}  (missing)`);
  out.push(`examples    ${pairs(d.examplesBySource)}`);
  if (d.corpus.count)
    out.push(
      `  corpus    ${d.corpus.count} file${d.corpus.count === 1 ? '' : 's'}: ${d.corpus.files.join(', ')}${d.corpus.count > d.corpus.files.length ? ', …' : ''}`,
    );
  if (d.pairs.total)
    out.push(
      `pairs       ${pairs(d.pairs.byBuilder)}`,
      ...d.pairs.items.map(
        (p) =>
          `    ${p.critiqueId}  pair ${p.contentHash.slice(0, 12)}…, ${p.builder}, weight ${p.weight}, ${p.category}${p.feedbackEventId ? `, feedback ${p.feedbackEventId}` : ''}`,
      ),
    );
  const { total, offset, items } = d.critiques;
  if (total === 0) return out;
  out.push(
    items.length
      ? `  from critiques ${offset + 1}-${offset + items.length} of ${total}:`
      : `  from critiques: ${total} (none at offset ${offset})`,
  );
  for (const it of items) {
    const by = it.example.builder ? `, by ${it.example.builder}` : '';
    out.push(
      `    ${it.critiqueId}  example ${it.example.contentHash.slice(0, 12)}…${by}, weight ${it.example.weight}, ${it.example.category}`,
    );
    if (!it.critique) {
      out.push('      critique  (missing)');
      continue;
    }
    out.push(
      `      critique  ${it.critique.teacher} ${it.critique.promptVersion}${it.critique.outerIterationId ? ` in ${it.critique.outerIterationId}` : ''}: ${cut(it.critique.text)}`,
    );
    const f = it.feedback;
    if (f)
      out.push(
        `      feedback  ${f.id}: ${f.kind}${f.rating !== null ? ` ${f.rating}/5` : ''} on ${f.modelVersion}, received ${f.receivedAt}${f.ingestedBy ? `, ingested by ${f.ingestedBy}` : ''}${f.comment ? `, comment ${cut(f.comment)}` : ''}`,
      );
    else
      out.push(
        `      source    ${it.critique.sourceKind} ${it.critique.sourceId}${it.critique.sourceKind === 'feedback' ? ' (event missing)' : ''}`,
      );
  }
  if (offset + items.length < total) out.push(`  … ${total - offset - items.length} more: --offset ${offset + items.length}`);
  return out;
}
