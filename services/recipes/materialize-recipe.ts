// A recipe commit as a folder a trainer runs: `git archive` unpacked, made read-only (folders 0555, files 0444, or
// 0555 where git records them executable), then moved into place in one rename, so a folder that exists is complete.
// Idempotent: a commit already there is left as it is.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gitBuffer, recipeRepoOf } from './recipe-repo';

/** Unpacks `commit` into `dir` (made, read-only) unless it is there; returns `dir`. */
export function materializeRecipe(home: string, campaign: string, commit: string, dir: string): string {
  if (fs.existsSync(dir)) return dir;
  const tar = gitBuffer(recipeRepoOf(home, campaign), ['archive', '--format=tar', commit]);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const tmp = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  fs.mkdirSync(tmp);
  try {
    execFileSync('tar', ['-x', '-C', tmp], { input: tar, stdio: ['pipe', 'ignore', 'pipe'] });
    readOnly(tmp);
    try {
      fs.renameSync(tmp, dir);
    } catch (e) {
      // Another worker put the same commit there first: it holds the same files.
      if (!fs.existsSync(dir)) throw e;
    }
  } finally {
    if (fs.existsSync(tmp)) {
      writable(tmp);
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  return dir;
}

function readOnly(p: string): void {
  const st = fs.lstatSync(p);
  if (st.isSymbolicLink()) return;
  if (st.isDirectory()) {
    for (const n of fs.readdirSync(p)) readOnly(path.join(p, n));
    fs.chmodSync(p, 0o555);
  } else fs.chmodSync(p, st.mode & 0o111 ? 0o555 : 0o444);
}

function writable(p: string): void {
  const st = fs.lstatSync(p);
  if (!st.isDirectory()) return;
  fs.chmodSync(p, 0o755);
  for (const n of fs.readdirSync(p)) writable(path.join(p, n));
}
