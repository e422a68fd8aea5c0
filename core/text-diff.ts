// A simple diff of a model's output against an item's reference, for the predictions views (dashboard and CLI): the
// longest common subsequence of their tokens (runs of letters and digits, runs of spaces, single other characters),
// as equal, removed (in the reference only) and added (in the output only) pieces. Pure: no I/O.

export interface DiffPiece {
  /** '=': in both; '-': in the reference only; '+': in the output only. */
  op: '=' | '-' | '+';
  text: string;
}

/** Past this many token pairs the table would be too big to build quickly: the diff is left out. */
export const MAX_DIFF_CELLS = 250_000;

const tokens = (s: string): string[] => s.match(/[\p{L}\p{N}_]+|\s+|[^\p{L}\p{N}_\s]/gu) ?? [];

/** The pieces that turn `reference` into `output`, adjacent pieces of one kind merged; undefined when too long. */
export function textDiff(reference: string, output: string): DiffPiece[] | undefined {
  const a = tokens(reference);
  const b = tokens(output);
  if (a.length * b.length > MAX_DIFF_CELLS) return undefined;
  // lcs[i][j]: the common subsequence's length of a[i..] and b[j..].
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: DiffPiece[] = [];
  const push = (op: DiffPiece['op'], text: string) => {
    const last = out[out.length - 1];
    if (last?.op === op) last.text += text;
    else out.push({ op, text });
  };
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      push('=', a[i++]);
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) push('-', a[i++]);
    else push('+', b[j++]);
  }
  while (i < a.length) push('-', a[i++]);
  while (j < b.length) push('+', b[j++]);
  return out;
}

/** The diff in one line of text: `[-removed-]` and `{+added+}` (git's word-diff), or undefined when too long. */
export function inlineDiff(reference: string, output: string): string | undefined {
  return textDiff(reference, output)
    ?.map((p) => (p.op === '=' ? p.text : p.op === '-' ? `[-${p.text}-]` : `{+${p.text}+}`))
    .join('');
}
