// The built-in task's base examples are pieces of its training files, not whole files. Every trainer draws one example
// a draw in proportion to its weight (the job contract's per-example weight, docs/backends.md), so whole files of
// 50 bytes to 40 KB, each of weight 1, drew a small file's bytes far more often than a large one's. Pieces of about
// PIECE_BYTES, cut at line ends, make a draw about byte-proportional again: a file of b bytes gives round(b / 1536)
// pieces (at least one), each cut at the newline nearest its even share. The newline a cut falls on is the one the
// version's train.txt joins examples with, so that file stays the corpus's train text byte for byte.
/** The size a piece aims at. Pieces of a file of 2.3 KB or more are about 1.15–1.9 KB; a smaller file is one piece. */
export const PIECE_BYTES = 1536;

/** `text` cut at newlines into about round(length / target) pieces, each cut's newline dropped: joined by '\n', `text`. */
export function piecesOf(text: string, target = PIECE_BYTES): string[] {
  const k = Math.max(1, Math.round(text.length / target));
  const pieces: string[] = [];
  let from = 0;
  for (let i = 1; i < k; i++) {
    const cut = nearestNewline(text, Math.round((i * text.length) / k), from);
    if (cut === undefined) break;
    pieces.push(text.slice(from, cut));
    from = cut + 1;
  }
  pieces.push(text.slice(from));
  return pieces;
}

/** The newline nearest `at` with text on both sides of it (at or after `from`, not the last character); undefined if none. */
function nearestNewline(text: string, at: number, from: number): number | undefined {
  const ok = (c: number) => c > from && c < text.length - 1;
  const options = [text.lastIndexOf('\n', at), text.indexOf('\n', at)].filter(ok);
  if (options.length === 0) return undefined;
  return options.reduce((best, c) => (Math.abs(c - at) < Math.abs(best - at) ? c : best));
}
