// The built-in teacher: with no model configured, a failure's critique is derived mechanically from the verifiable
// difference between the output and the reference, and turned into training signals for the next dataset version.
import { tokenize } from '../graders/code-tokens';

/** The `critiques.teacher` value of critiques written by this module. */
export const BUILTIN_TEACHER = 'builtin';
/** Bumped whenever the critique text or the signals derived from the same failure change. */
export const BUILTIN_TEACHER_PROMPT_VERSION = 'builtin-diff-v1';

/** A corrected target for supervised training. */
export interface SftSignal {
  kind: 'sft';
  prompt: string;
  target: string;
  /** Per-example weight: see {@link errorWeight}. */
  weight: number;
  /** The loss-weight category of the example. */
  category: string;
}

/** A preferred/rejected pair for preference training (not read by the built-in SFT trainer). */
export interface PairSignal {
  kind: 'pair';
  prompt: string;
  chosen: string;
  rejected: string;
  weight: number;
}

/** A failure that cannot be turned into a training example (no reference to learn from). */
export interface NoSignal {
  kind: 'none';
  why: string;
}

export type TrainingSignal = SftSignal | PairSignal | NoSignal;

export interface Failure {
  prompt: string;
  output: string;
  /** The correct output (an edit's correction). */
  reference: string;
  /** @default 'code' */
  category?: string;
}

export interface TeacherCritique {
  /** Plain English, first sentence saying how it was made. */
  text: string;
  /** An `sft` signal always; then a `pair` when the output is non-empty and differs from the reference. */
  signals: TrainingSignal[];
}

/** The first sentence of every built-in critique. */
export const BUILTIN_PREAMBLE = 'Derived mechanically by the built-in teacher (no model).';

/** Token lists and quotes are cut so a critique of a 64 KB output stays readable. */
const MAX_LISTED = 8;
const MAX_QUOTE = 60;

/**
 * The weight of a failure's examples: `1 + e`, where `e` in [0, 1] is the share of tokens the output got wrong —
 * (missing + extra tokens, counted as multisets) / (reference tokens + output tokens). An output that matches
 * weighs 1 (an ordinary example), a wholly wrong or empty output weighs 2. Rounded to 3 decimals.
 */
export function errorWeight(missing: number, extra: number, refTokens: number, outTokens: number): number {
  const total = refTokens + outTokens;
  const e = total === 0 ? 0 : (missing + extra) / total;
  return Math.round((1 + e) * 1000) / 1000;
}

export function critique(failure: Failure): TeacherCritique {
  const { prompt, output, reference } = failure;
  const ref = tokenize(reference).map((t) => ({ ...t, text: reference.slice(t.start, t.end) }));
  const out = tokenize(output).map((t) => ({ ...t, text: output.slice(t.start, t.end) }));
  const { missing, extra } = multisetDiff(
    ref.map((t) => t.text),
    out.map((t) => t.text),
  );
  const weight = errorWeight(count(missing), count(extra), ref.length, out.length);

  const lines = [BUILTIN_PREAMBLE, 'It compares the output with the reference token by token.'];
  if (output === reference) {
    lines.push('The output already matches the reference exactly; the reference is kept as an ordinary example.');
  } else if (output.trim() === '') {
    lines.push(
      `The output is empty; expected ${ref.length} token${ref.length === 1 ? '' : 's'} starting with ${quote(ref[0]?.text ?? reference)}.`,
    );
  } else {
    let i = 0;
    while (i < ref.length && i < out.length && ref[i].text === out[i].text) i++;
    if (i === ref.length && i === out.length) {
      const at = firstDiff(reference, output);
      lines.push(`The output has the same tokens as the reference and differs only in whitespace, first at ${where(reference, at)}.`);
    } else if (i === out.length) {
      lines.push(
        `The output stops early: it matches the first ${i} of ${ref.length} reference tokens, then ends where ${quote(ref[i].text)} was expected at ${where(reference, ref[i].start)}.`,
      );
    } else if (i === ref.length) {
      lines.push(
        `The output matches all ${ref.length} reference tokens, then continues with ${quote(out[i].text)} and ${out.length - i - 1} more token(s) that should not be there.`,
      );
    } else {
      lines.push(
        `The output first diverges from the reference at token ${i + 1} of ${ref.length} (${where(reference, ref[i].start)}): expected ${quote(ref[i].text)}, produced ${quote(out[i].text)}.`,
      );
    }
    if (missing.size) lines.push(`Missing from the output (in the reference only): ${list(missing)}.`);
    if (extra.size) lines.push(`Extra in the output (not in the reference): ${list(extra)}.`);
  }
  lines.push(
    `Weight ${weight}: ${count(missing)} missing and ${count(extra)} extra of ${ref.length} reference and ${out.length} output tokens.`,
  );

  const signals: TrainingSignal[] = [{ kind: 'sft', prompt, target: reference, weight, category: failure.category ?? 'code' }];
  if (output !== '' && output !== reference) signals.push({ kind: 'pair', prompt, chosen: reference, rejected: output, weight });
  return { text: lines.join(' '), signals };
}

/** Tokens the reference has more of than the output (missing), and the reverse (extra), with multiplicities. */
function multisetDiff(ref: string[], out: string[]): { missing: Map<string, number>; extra: Map<string, number> } {
  const bal = new Map<string, number>();
  for (const t of ref) bal.set(t, (bal.get(t) ?? 0) + 1);
  for (const t of out) bal.set(t, (bal.get(t) ?? 0) - 1);
  const missing = new Map<string, number>();
  const extra = new Map<string, number>();
  for (const [t, d] of bal) {
    if (d > 0) missing.set(t, d);
    else if (d < 0) extra.set(t, -d);
  }
  return { missing, extra };
}

const count = (m: Map<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

function list(m: Map<string, number>): string {
  const items = [...m].map(([t, k]) => (k > 1 ? `${quote(t)} ×${k}` : quote(t)));
  const shown = items.slice(0, MAX_LISTED).join(', ');
  return items.length > MAX_LISTED ? `${shown} and ${items.length - MAX_LISTED} more` : shown;
}

function quote(s: string): string {
  return JSON.stringify(s.length > MAX_QUOTE ? s.slice(0, MAX_QUOTE) + '…' : s);
}

function firstDiff(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** `line L, column C` (1-based) of offset `at` in `s`. */
function where(s: string, at: number): string {
  const before = s.slice(0, at);
  const line = before.split('\n').length;
  return `line ${line}, column ${at - before.lastIndexOf('\n')}`;
}
