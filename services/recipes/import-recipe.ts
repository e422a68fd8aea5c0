// Importing a recipe folder as a commit of the campaign's recipe repository. The commit is a function of the folder's
// content alone (sorted paths, git's modes, the fixed identity and date of recipe-repo.ts, no parent), so importing
// the same folder again, anywhere, gives the same sha and writes nothing new. Refused, one line each (UsageError): a
// missing folder, a symlink pointing outside it, a file or a folder over its cap, something neither file nor folder.
import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../core/errors';
import { commitIndex, ensureRecipeRepo, git, tempIndexOf } from './recipe-repo';

/** The largest file a recipe may hold. */
export const MAX_RECIPE_FILE_BYTES = 5 * 1024 * 1024;
/** The largest recipe folder, all files together. */
export const MAX_RECIPE_BYTES = 50 * 1024 * 1024;
/** The most files a recipe folder may hold. */
export const MAX_RECIPE_FILES = 5000;
/** Folders never imported: version control and Python's byte-code caches. */
const SKIPPED = new Set(['.git', '__pycache__']);

interface Entry {
  rel: string;
  mode: '100644' | '100755' | '120000';
  /** The file's bytes, or a symlink's target. */
  content: Buffer;
}

export interface RecipeCaps {
  fileBytes: number;
  folderBytes: number;
  files: number;
}

const CAPS: RecipeCaps = { fileBytes: MAX_RECIPE_FILE_BYTES, folderBytes: MAX_RECIPE_BYTES, files: MAX_RECIPE_FILES };

/**
 * The folder's commit sha; the folder is imported into FLYWHEEL_HOME/recipes/<campaign>.git the first time. `caps`
 * lowers the caps (tests). @default MAX_RECIPE_FILE_BYTES, MAX_RECIPE_BYTES, MAX_RECIPE_FILES
 */
export async function importRecipe(home: string, campaignName: string, folder: string, caps: Partial<RecipeCaps> = {}): Promise<string> {
  const root = path.resolve(folder);
  const entries = readFolder(root, { ...CAPS, ...caps });
  const repo = ensureRecipeRepo(home, campaignName);
  const indexFile = tempIndexOf(repo);
  try {
    const lines: string[] = [];
    for (const e of entries) {
      const sha = git(repo, ['hash-object', '-w', '--stdin'], { input: e.content });
      lines.push(`${e.mode} ${sha}\t${e.rel}`);
    }
    git(repo, ['update-index', '--add', '-z', '--index-info'], { indexFile, input: lines.map((l) => `${l}\0`).join('') });
    return commitIndex(repo, indexFile, 'import recipe');
  } finally {
    fs.rmSync(indexFile, { force: true });
  }
}

/** The folder's files in sorted order, checked against the caps. */
function readFolder(root: string, caps: RecipeCaps): Entry[] {
  let st: fs.Stats;
  try {
    st = fs.statSync(root);
  } catch {
    throw new UsageError(`trainer.recipe.path: ${root} does not exist`);
  }
  if (!st.isDirectory()) throw new UsageError(`trainer.recipe.path: ${root} is not a folder`);
  const realRoot = fs.realpathSync(root);
  const out: Entry[] = [];
  let total = 0;
  const walk = (dir: string, rel: string): void => {
    for (const name of fs.readdirSync(dir).sort()) {
      if (SKIPPED.has(name)) continue;
      const abs = path.join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      const l = fs.lstatSync(abs);
      if (l.isSymbolicLink()) {
        const target = fs.readlinkSync(abs);
        const resolved = path.resolve(path.dirname(abs), target);
        let real: string | undefined;
        try {
          real = fs.realpathSync(resolved);
        } catch {
          real = undefined;
        }
        if (path.isAbsolute(target) || !inside(realRoot, real ?? resolved))
          throw new UsageError(`trainer.recipe.path: ${r} is a symlink to ${target}, outside the recipe folder`);
        out.push({ rel: r, mode: '120000', content: Buffer.from(target) });
      } else if (l.isDirectory()) {
        walk(abs, r);
      } else if (l.isFile()) {
        if (l.size > caps.fileBytes)
          throw new UsageError(`trainer.recipe.path: ${r} is ${l.size} bytes, over the ${caps.fileBytes}-byte cap of a recipe file`);
        total += l.size;
        if (total > caps.folderBytes)
          throw new UsageError(`trainer.recipe.path: ${root} holds over ${caps.folderBytes} bytes, the cap of a recipe folder`);
        out.push({ rel: r, mode: l.mode & 0o111 ? '100755' : '100644', content: fs.readFileSync(abs) });
      } else {
        throw new UsageError(`trainer.recipe.path: ${r} is neither a file, a folder nor a symlink`);
      }
      if (out.length > caps.files)
        throw new UsageError(`trainer.recipe.path: ${root} holds over ${caps.files} files, the cap of a recipe folder`);
    }
  };
  walk(root, '');
  if (out.length === 0) throw new UsageError(`trainer.recipe.path: ${root} holds no file`);
  return out;
}

const inside = (root: string, p: string) => p === root || p.startsWith(root + path.sep);
