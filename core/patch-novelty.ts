// Whether a patch was tried before: its fingerprint (the sha256 of the diff normalised: no index lines, no hunk
// offsets, no trailing spaces, so the same change written against a moved base is the same patch) and how much its
// changed lines overlap another's (Jaccard of the added and removed line sets, per file): a near-duplicate is one
// above NEAR_DUPLICATE_SIMILARITY.
import crypto from 'node:crypto';
import { parseUnifiedDiff, type DiffFile } from './unified-diff';

/** Changed-line similarity at or above which a patch counts as a near-duplicate of one already tried. */
export const NEAR_DUPLICATE_SIMILARITY = 0.9;

/** The diff as its fingerprint reads it: per file its paths, then its hunks' lines with trailing spaces stripped. */
export function normalizePatch(diff: string | DiffFile[]): string {
  const files = typeof diff === 'string' ? parseUnifiedDiff(diff) : diff;
  return files
    .map((f) =>
      [
        `file ${f.oldPath ?? '/dev/null'} ${f.newPath ?? '/dev/null'}${f.newMode ? ` ${f.newMode}` : ''}`,
        ...f.body.map((l) => l.trimEnd()),
      ].join('\n'),
    )
    .join('\n');
}

/** sha256 (hex) of normalizePatch. */
export function patchHash(diff: string | DiffFile[]): string {
  return crypto.createHash('sha256').update(normalizePatch(diff)).digest('hex');
}

/** The set of a diff's changed lines: `path\t+line` and `path\t-line`, trimmed; blank lines left out. */
export function changedLines(diff: string | DiffFile[]): Set<string> {
  const files = typeof diff === 'string' ? parseUnifiedDiff(diff) : diff;
  const out = new Set<string>();
  for (const f of files) {
    const p = f.newPath ?? f.oldPath ?? '';
    for (const l of f.added) if (l.trim()) out.add(`${p}\t+${l.trim()}`);
    for (const l of f.removed) if (l.trim()) out.add(`${p}\t-${l.trim()}`);
  }
  return out;
}

/** Jaccard similarity of two diffs' changed-line sets, 0..1 (two empty sets: 1). */
export function patchSimilarity(a: string | DiffFile[], b: string | DiffFile[]): number {
  const x = changedLines(a);
  const y = changedLines(b);
  if (x.size === 0 && y.size === 0) return 1;
  let both = 0;
  for (const l of x) if (y.has(l)) both++;
  return both / (x.size + y.size - both);
}
