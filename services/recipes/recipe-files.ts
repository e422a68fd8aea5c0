// Reading a recipe commit: its files (all, or the paths asked for) and its diff against its parent.
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

/** Git's mode of each of `paths` the commit holds (`100644`, `100755`, `120000` for a symlink). */
export function recipeModes(home: string, campaign: string, commit: string, paths: string[]): Record<string, string> {
  if (paths.length === 0) return {};
  const out: Record<string, string> = {};
  const listed = git(recipeRepoOf(home, campaign), ['ls-tree', '-z', commit, '--', ...paths])
    .split('\0')
    .filter(Boolean);
  for (const line of listed) {
    const [meta, p] = line.split('\t');
    out[p] = meta.split(' ')[0];
  }
  return out;
}
