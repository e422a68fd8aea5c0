// Applying a unified diff to a recipe commit without a work tree: the base's tree is read into a private index
// (GIT_INDEX_FILE), the diff applied to it (`git apply --cached`), and the result committed on the base with the fixed
// identity and date, so a retried activity applying the same diff to the same base makes the same commit.
import fs from 'node:fs';
import { GitError, commitIndex, git, tempIndexOf } from './recipe-repo';

export type ApplyResult = { ok: true; commit: string } | { ok: false; reason: string };

/** The commit of `diff` applied to `baseCommit` in `repo`; `{ok: false}` with git's first line when it does not apply. */
export function applyPatch(repo: string, baseCommit: string, diff: string, message: string): ApplyResult {
  const indexFile = tempIndexOf(repo);
  try {
    git(repo, ['read-tree', baseCommit], { indexFile });
    try {
      git(repo, ['apply', '--cached', '--whitespace=nowarn', '-'], { indexFile, input: diff.endsWith('\n') ? diff : `${diff}\n` });
    } catch (e) {
      if (!(e instanceof GitError)) throw e;
      const line = e.stderr.split('\n').find((l) => l.startsWith('error:')) ?? e.stderr.split('\n')[0] ?? 'git apply failed';
      return { ok: false, reason: line.replace(/^error:\s*/, '') };
    }
    return { ok: true, commit: commitIndex(repo, indexFile, message, baseCommit) };
  } finally {
    fs.rmSync(indexFile, { force: true });
  }
}
