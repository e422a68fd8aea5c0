// Reading a recipe commit: its files (all, or the paths asked for), its diff against its parent, and the files it changed
// against another commit.
import { git, gitBuffer, recipeRepoOf } from './recipe-repo';

/** The commit's files as text, by path (sorted), all of them or only `paths` (a path the commit lacks is left out). */
export function recipeFiles(home: string, campaign: string, commit: string, paths?: string[]): Record<string, string> {
  const repo = recipeRepoOf(home, campaign);
  const listed = git(repo, ['ls-tree', '-r', '-z', '--name-only', commit]).split('\0').filter(Boolean);
  const wanted = paths ? listed.filter((p) => paths.includes(p)) : listed;
  const out: Record<string, string> = {};
  for (const p of wanted.sort()) out[p] = gitBuffer(repo, ['cat-file', 'blob', `${commit}:${p}`]).toString('utf8');
  return out;
}

/** The commit's unified diff against its parent (`git diff-tree -p`); an imported commit's whole tree as added. */
export function commitDiff(home: string, campaign: string, commit: string): string {
  const repo = recipeRepoOf(home, campaign);
  return gitBuffer(repo, ['diff-tree', '-p', '--root', '--no-commit-id', '--full-index', commit]).toString('utf8');
}

/** The commit's parent, or null for an imported one. */
export function commitParent(home: string, campaign: string, commit: string): string | null {
  const line = git(recipeRepoOf(home, campaign), ['rev-list', '--parents', '-n', '1', commit]).split(' ');
  return line[1] ?? null;
}

/** One file a commit changed against another, as git's tree diff says (no rename detection). */
export interface ChangedFile {
  path: string;
  /** Its mode before (`000000` where the commit adds it). */
  oldMode: string;
  /** Its mode after (`100644`, `100755`, `120000` for a symlink; `000000` where it was deleted). */
  mode: string;
  /** git's status letter: A, M, D or T. */
  status: string;
}

/**
 * Every file `commit` changes against `base` (`git diff-tree -r --raw --no-renames`): what git did, whatever the
 * diff that made the commit said in its headers.
 */
export function changedFiles(home: string, campaign: string, base: string, commit: string): ChangedFile[] {
  const raw = gitBuffer(recipeRepoOf(home, campaign), ['diff-tree', '-r', '-z', '--raw', '--no-renames', base, commit]);
  const fields = raw.toString('utf8').split('\0');
  const out: ChangedFile[] = [];
  // -z --raw: ":oldmode newmode oldsha newsha status" NUL path NUL, per file.
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const meta = fields[i].replace(/^:/, '').split(' ');
    out.push({ path: fields[i + 1], oldMode: meta[0], mode: meta[1], status: meta[4] });
  }
  return out;
}
