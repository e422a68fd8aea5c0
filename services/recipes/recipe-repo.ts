// Where a campaign's recipe lives (FLYWHEEL_HOME/recipes/<campaign>.git, a bare repository Flywheel owns) and how
// Flywheel runs git on it: a fixed author, committer and date, no user or system configuration, so the same tree on
// the same parent always makes the same commit (an import, or a retried activity applying the same patch).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { safeName } from '../paths';
import { FlywheelError } from '../../core/errors';

export const recipesRoot = (home: string) => path.join(home, 'recipes');
export const recipeRepoOf = (home: string, campaign: string) => path.join(recipesRoot(home), `${safeName(campaign)}.git`);
/** Read-only checkouts of commits, one folder per commit, that trainers run (materializeRecipe). */
export const recipeTreeOf = (home: string, campaign: string, commit: string) =>
  path.join(recipesRoot(home), `${safeName(campaign)}.trees`, commit);

/** The identity and date every Flywheel-made commit carries. */
const FIXED = {
  GIT_AUTHOR_NAME: 'Flywheel',
  GIT_AUTHOR_EMAIL: 'flywheel@localhost',
  GIT_AUTHOR_DATE: '946684800 +0000',
  GIT_COMMITTER_NAME: 'Flywheel',
  GIT_COMMITTER_EMAIL: 'flywheel@localhost',
  GIT_COMMITTER_DATE: '946684800 +0000',
};

/** A git command that failed; `stderr` is its text. Retryable, as any error Temporal does not know. */
export class GitError extends FlywheelError {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface GitOptions {
  input?: string | Buffer;
  /** A temporary index (GIT_INDEX_FILE), so no two calls share one. */
  indexFile?: string;
}

/** Runs git on the bare repository `repo`; its stdout as a Buffer. GitError carries stderr's text. */
export function gitBuffer(repo: string, args: string[], o: GitOptions = {}): Buffer {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_DIR: repo,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    HOME: repo,
    LC_ALL: 'C',
    ...FIXED,
    ...(o.indexFile ? { GIT_INDEX_FILE: o.indexFile } : {}),
  };
  try {
    return execFileSync('git', args, { env, input: o.input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? '').trim();
    throw new GitError(`git ${args[0]}: ${stderr.split('\n')[0] || (e as Error).message}`, stderr);
  }
}

export const git = (repo: string, args: string[], o: GitOptions = {}): string => gitBuffer(repo, args, o).toString('utf8').trim();

/** The campaign's repository, made (bare, empty) the first time. */
export function ensureRecipeRepo(home: string, campaign: string): string {
  const repo = recipeRepoOf(home, campaign);
  if (!fs.existsSync(path.join(repo, 'HEAD'))) {
    fs.mkdirSync(repo, { recursive: true });
    git(repo, ['init', '--quiet', '--bare', repo]);
  }
  return repo;
}

/** Whether the repository holds `commit` as a commit object. */
export function hasCommit(repo: string, commit: string): boolean {
  if (!/^[0-9a-f]{40}$/.test(commit) || !fs.existsSync(path.join(repo, 'HEAD'))) return false;
  try {
    return git(repo, ['cat-file', '-t', commit]) === 'commit';
  } catch {
    return false;
  }
}

/** A private index file beside the repository, removed by the caller (`fs.rmSync(f, {force: true})`). */
export function tempIndexOf(repo: string): string {
  return path.join(repo, `index.${process.pid}.${Math.random().toString(36).slice(2)}`);
}

/** Writes the tree of a temporary index and commits it on `parent` with the fixed identity and date. */
export function commitIndex(repo: string, indexFile: string, message: string, parent?: string): string {
  const tree = git(repo, ['write-tree'], { indexFile });
  return git(repo, ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', message]);
}
