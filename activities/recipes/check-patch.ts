// Every check a recipe patch passes before anything runs it, in order, each refusal one line naming its rule: the
// size cap, a readable diff, no binary, only `trainer.recipe.mutable` files (no creation, deletion or rename
// elsewhere), no mode change, not a duplicate (normalised hash) nor a near-duplicate (changed-line similarity) of a
// patch tried before, applies cleanly to the base commit, changes (as git's tree diff of the result says) only
// `mutable` regular files, and its Python compiles (inside the trainers' sandbox).
// An accepted patch is a commit on the base (services/recipes/apply-patch.ts): the same diff on the same base is the
// same commit, so a retried check is idempotent.
import path from 'node:path';
import { NEAR_DUPLICATE_SIMILARITY, patchHash, patchSimilarity } from '../../core/patch-novelty';
import { diffSummary, parseUnifiedDiff, touchedPaths } from '../../core/unified-diff';
import { applyPatch } from '../../services/recipes/apply-patch';
import { changedFiles, recipeFiles } from '../../services/recipes/recipe-files';
import { hasCommit, recipeRepoOf } from '../../services/recipes/recipe-repo';
import { pyCompile } from './py-compile';

export interface CheckPatchInput {
  /** FLYWHEEL_HOME. */
  home: string;
  /** The campaign's name: its recipe repository. */
  campaign: string;
  /** The commit the diff was written against (the current best). */
  baseCommit: string;
  diff: string;
  /** `trainer.recipe.mutable`: paths relative to the recipe folder. */
  mutable: string[];
  /** `trainer.recipe.maxPatchBytes`. */
  maxBytes: number;
  /** Patches tried before (triedPatches): a duplicate or near-duplicate of one is refused. */
  tried: { normalizedHash: string; diff: string }[];
  /** `trainer.unsandboxed`: compile without the sandbox where the host cannot make one. @default false */
  unsandboxed?: boolean;
}

export type CheckPatchResult =
  { ok: true; commit: string; normalizedHash: string; summary: string } | { ok: false; reason: string; normalizedHash?: string };

export async function checkPatch(input: CheckPatchInput): Promise<CheckPatchResult> {
  const bytes = Buffer.byteLength(input.diff);
  if (bytes > input.maxBytes)
    return { ok: false, reason: `size: the patch is ${bytes} bytes, over trainer.recipe.maxPatchBytes (${input.maxBytes})` };
  const files = parseUnifiedDiff(input.diff);
  if (files.length === 0) return { ok: false, reason: 'format: not a unified diff (no file header and hunk found)' };
  const normalizedHash = patchHash(files);
  const refuse = (reason: string): CheckPatchResult => ({ ok: false, reason, normalizedHash });

  const binary = files.find((f) => f.binary);
  if (binary) return refuse(`binary: ${binary.newPath ?? binary.oldPath} is a binary change; only text patches are accepted`);
  const mutable = new Set(input.mutable.map((p) => path.posix.normalize(p)));
  const outside = touchedPaths(files).find((p) => !mutable.has(path.posix.normalize(p)));
  if (outside !== undefined) return refuse(`mutable: the patch touches ${outside}, which is not in trainer.recipe.mutable`);
  const mode = files.find((f) => f.modeChange || (f.newFile && f.newMode !== undefined && f.newMode !== '100644'));
  if (mode)
    return refuse(`mode: the patch sets mode ${mode.newMode} on ${mode.newPath ?? mode.oldPath}; a patch may not change file modes`);

  const same = input.tried.find((t) => t.normalizedHash === normalizedHash);
  if (same) return refuse(`duplicate: the same change was tried before (normalised hash ${normalizedHash.slice(0, 12)})`);
  for (const t of input.tried) {
    const s = patchSimilarity(files, t.diff);
    if (s >= NEAR_DUPLICATE_SIMILARITY)
      return refuse(
        `near-duplicate: ${Math.round(s * 100)}% of its changed lines match a patch tried before (${t.normalizedHash.slice(0, 12)}; the threshold is ${Math.round(NEAR_DUPLICATE_SIMILARITY * 100)}%)`,
      );
  }

  const repo = recipeRepoOf(input.home, input.campaign);
  if (!hasCommit(repo, input.baseCommit))
    return refuse(`apply: the base commit ${input.baseCommit.slice(0, 12)} is not in the recipe repository of "${input.campaign}"`);
  const applied = applyPatch(repo, input.baseCommit, input.diff, `patch ${normalizedHash.slice(0, 12)}`);
  if (!applied.ok) return refuse(`apply: the patch does not apply to ${input.baseCommit.slice(0, 12)}: ${applied.reason}`);

  // What git changed, not what the headers said: a section this reader skips (a `diff --git` line it cannot split,
  // as with a space in a name) must not change a file unseen. A symlink's text is its target: no patch may make one.
  const changed = changedFiles(input.home, input.campaign, input.baseCommit, applied.commit);
  const unseen = changed.find((c) => !mutable.has(c.path));
  if (unseen) return refuse(`mutable: applied, the patch changes ${unseen.path}, which is not in trainer.recipe.mutable`);
  const link = changed.find((c) => c.mode !== '000000' && c.mode !== '100644' && c.mode !== '100755');
  if (link) return refuse(`mode: ${link.path} is mode ${link.mode} after the patch; a patch may only change regular files`);
  const remoded = changed.find((c) => (c.status === 'A' ? c.mode !== '100644' : c.status !== 'D' && c.mode !== c.oldMode));
  if (remoded) return refuse(`mode: the patch sets mode ${remoded.mode} on ${remoded.path}; a patch may not change file modes`);

  const python = changed.filter((c) => c.mode !== '000000' && c.path.endsWith('.py')).map((c) => c.path);
  const problem = await pyCompile(recipeFiles(input.home, input.campaign, applied.commit, python), {
    home: input.home,
    unsandboxed: input.unsandboxed,
  });
  if (problem) return refuse(`compile: ${problem}`);
  return { ok: true, commit: applied.commit, normalizedHash, summary: diffSummary(files) };
}
