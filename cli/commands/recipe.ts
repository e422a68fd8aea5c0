// `flywheel recipe show CAMPAIGN[@COMMIT]` and `flywheel recipe log CAMPAIGN`: a campaign's recipe (trainer.recipe)
// as git keeps it under FLYWHEEL_HOME: a commit's files or its diff against its parent, and the kept history with
// the score that kept each commit, like `git log`. Reads PostgreSQL and the recipe repository; Temporal is not needed.
import fs from 'node:fs';
import type { Command } from 'commander';
import { resolveConfig } from '../../core/config';
import type { Db } from '../../db/client';
import { campaignBestRecipe } from '../../services/best-recipe-commit';
import { selectionMetricOf } from '../../services/queries/campaigns';
import { recipeLog, type KeptRecipeCommit } from '../../services/recipe-history';
import { commitDiff, recipeFiles } from '../../services/recipes/recipe-files';
import { git, hasCommit, recipeRepoOf } from '../../services/recipes/recipe-repo';
import { UsageError } from '../errors';
import { withDb } from '../with-db';

export function registerRecipe(program: Command): void {
  const recipe = program
    .command('recipe')
    .description("a campaign's versioned recipe (trainer.recipe): its commits, files and kept history")
    .addHelpText('after', '\nExamples:\n  $ flywheel recipe show torch-demo\n  $ flywheel recipe log torch-demo\n');
  recipe
    .command('show')
    .description("a recipe commit's files (the campaign's best commit when none is named), or --diff its diff against its parent")
    .argument('<campaign[@commit]>', 'a campaign, or a campaign and a commit (a hex prefix of 4 or more)')
    .option('--diff', "print the commit's diff against its parent instead of its files")
    .option('--file <path>', 'print this file only')
    .option('--json', 'print {"commit", "files"} (or {"commit", "diff"}) as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 printed, 1 database unreachable, 2 unknown campaign or commit, no recipe, or no such file.\n\nExample:\n  $ flywheel recipe show torch-demo@3f2a1b9c --diff\n',
    )
    .action(async (ref: string, opts: { diff?: boolean; file?: string; json?: boolean }) =>
      withDb(async (db) => {
        const home = homeDir();
        const [campaign, at] = splitRef(ref);
        const commit = at === undefined ? await bestCommit(db, campaign) : resolveCommit(home, campaign, at);
        if (opts.diff) {
          const diff = commitDiff(home, campaign, commit);
          console.log(opts.json ? JSON.stringify({ commit, diff }) : diff.replace(/\n$/, ''));
          return;
        }
        const files = recipeFiles(home, campaign, commit, opts.file ? [opts.file] : undefined);
        if (opts.file && !(opts.file in files)) throw new UsageError(`commit ${commit.slice(0, 12)} has no file ${opts.file}`);
        if (opts.json) return console.log(JSON.stringify({ commit, files }));
        const names = Object.keys(files);
        // One file: its text as it is (pipe it into a file, edit, diff); several: each under a header, like `head`.
        if (opts.file) return void process.stdout.write(files[opts.file]);
        console.log(`commit ${commit}\n${names.map((n) => `\n==> ${n} <==\n${files[n].replace(/\n$/, '')}`).join('\n')}`);
      }),
    );
  recipe
    .command('log')
    .description(
      "the recipe's kept commits, newest (the best) first, each with its parent, the patch that made it and the score that kept it",
    )
    .argument('<campaign>')
    .option('--json', 'print the history as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 printed, 1 database unreachable, 2 unknown campaign or no recipe.\n\nExample:\n  $ flywheel recipe log torch-demo\n',
    )
    .action(async (campaign: string, opts: { json?: boolean }) =>
      withDb(async (db) => {
        const best = await campaignBestRecipe(db, campaign);
        if ('none' in best) throw new UsageError(best.none);
        const log = await recipeLog(db, campaign);
        if (opts.json) return console.log(JSON.stringify({ imported: best.recipe.commit, kept: log }, null, 2));
        console.log(formatRecipeLog(log, best.recipe.commit, (await selectionMetricOf(db, campaign)) ?? 'score').join('\n'));
      }),
    );
}

/** `git log` with scores: each kept commit, newest first, then the imported commit every history starts from. */
export function formatRecipeLog(log: KeptRecipeCommit[], imported: string, metric: string): string[] {
  const out: string[] = [];
  log.forEach((k, i) => {
    out.push(`commit ${k.commit}${i === 0 ? '  (best)' : ''}`);
    if (k.parent) out.push(`Parent: ${k.parent}`);
    out.push(
      `Kept:   ${k.keptAt.replace('T', ' ').slice(0, 19)}, public ${metric} ${k.score ?? '–'}${k.experimentId ? ` by ${k.experimentId}` : ''}`,
    );
    if (k.patch)
      out.push(
        `Patch:  ${k.patch.summary || k.patch.id} by ${k.patch.proposer}`,
        ...(k.patch.hypothesis ? [`    ${k.patch.hypothesis}`] : []),
      );
    out.push('');
  });
  out.push(`commit ${imported}${log.length === 0 ? '  (best)' : ''}`, 'Imported from trainer.recipe.path (the campaign version pins it)');
  return out;
}

const splitRef = (ref: string): [string, string | undefined] => {
  const at = ref.lastIndexOf('@');
  return at < 0 ? [ref, undefined] : [ref.slice(0, at), ref.slice(at + 1)];
};

async function bestCommit(db: Db, campaign: string): Promise<string> {
  const best = await campaignBestRecipe(db, campaign);
  if ('none' in best) throw new UsageError(best.none);
  return best.commit;
}

/** A full commit from a hex prefix the campaign's repository holds; UsageError otherwise. */
function resolveCommit(home: string, campaign: string, at: string): string {
  if (!/^[0-9a-f]{4,40}$/.test(at)) throw new UsageError(`"${at}" is not a commit: give 4 to 40 hex digits after the @`);
  const repo = recipeRepoOf(home, campaign);
  if (!fs.existsSync(repo)) throw new UsageError(`campaign "${campaign}" has no recipe repository under ${home}`);
  let full: string;
  try {
    full = git(repo, ['rev-parse', '--verify', '--quiet', `${at}^{commit}`]);
  } catch {
    throw new UsageError(`the recipe of "${campaign}" has no commit ${at} (or more than one starts so: give more digits)`);
  }
  if (!hasCommit(repo, full)) throw new UsageError(`the recipe of "${campaign}" has no commit ${at}`);
  return full;
}

const homeDir = () => resolveConfig(process.env, process.cwd()).home;
