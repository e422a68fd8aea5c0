// Prompts with their true continuations, cut from the built-in corpus's TRAIN files only: what simulated users ask
// the production model, and what an editing user writes back. Eval items come from the public and held-out files,
// so a continuation a user teaches can never be an eval item's answer.
import { Rng } from '../../core/stream-rng';
import { codeMask, splitOfFile, type SourceFile } from './eval-items';
import { tokenAt } from '../../core/graders/code-tokens';
import { NonRetryableError } from '../../core/errors';

export interface TrainPrompt {
  /** `p-<file>:<offset>`: where the continuation starts. */
  id: string;
  /** The text before the continuation (at a token boundary, inside code). */
  prompt: string;
  /** What the file really says next: whole tokens, to the end of the line or `maxContinuation` bytes. */
  reference: string;
  sourceFile: string;
}

export interface TrainPromptOptions {
  /** Prompts wanted (fewer if the files hold fewer eligible positions). */
  count: number;
  seed: number;
  /** Separates draws of one seed (a simulation round): the same seed and stream give the same prompts. @default "" */
  stream?: string;
  /** @default 64 */
  minPrompt?: number;
  /** @default 160 */
  maxPrompt?: number;
  /** The continuation stops at the last whole token within this many characters. @default 48 */
  maxContinuation?: number;
}

/** A file outside the train split was offered as a prompt source. */
export class NotTrainSplitError extends NonRetryableError {}

function withDefaults(o: TrainPromptOptions): Required<TrainPromptOptions> {
  return { stream: '', minPrompt: 64, maxPrompt: 160, maxContinuation: 48, ...o };
}

/**
 * `count` prompts, each ending where a code token starts (never inside a comment or a string), with the rest of
 * that line as the reference. Positions are drawn uniformly over all eligible tokens with a seeded Rng, so the
 * result is a pure function of the files, the seed and the stream. Throws NotTrainSplitError for any file that
 * `splitOfFile` does not put in the train split.
 */
export function drawTrainPrompts(files: readonly SourceFile[], options: TrainPromptOptions): TrainPrompt[] {
  const o = withDefaults(options);
  const foreign = files.filter((f) => splitOfFile(f.file) !== 'train').map((f) => f.file);
  if (foreign.length)
    throw new NotTrainSplitError(
      `not train-split files: ${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ` and ${foreign.length - 3} more` : ''}`,
    );
  const sorted = [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const starts: { f: number; start: number }[] = [];
  sorted.forEach((src, f) => {
    const code = codeMask(src.text);
    for (let t = tokenAt(src.text, 0); t; t = tokenAt(src.text, t.end)) {
      if (t.start >= o.minPrompt && code[t.start] && t.cls !== 'other' && t.end - t.start <= o.maxContinuation)
        starts.push({ f, start: t.start });
    }
  });
  const rng = Rng.derive(o.seed, `train-prompts:${o.stream}`);
  const out: TrainPrompt[] = [];
  const taken = new Set<number>();
  while (out.length < Math.min(o.count, starts.length)) {
    const i = rng.int(starts.length);
    if (taken.has(i)) continue;
    taken.add(i);
    const { f, start } = starts[i];
    const src = sorted[f];
    const len = o.minPrompt + rng.int(o.maxPrompt - o.minPrompt + 1);
    let from = Math.max(0, start - len);
    // Never start inside a surrogate pair: a lone half is not valid text, and the feedback API refuses it.
    if (isLowSurrogate(src.text.charCodeAt(from))) from += 1;
    out.push({
      id: `p-${src.file}:${start}`,
      prompt: src.text.slice(from, start),
      reference: continuation(src.text, start, o.maxContinuation),
      sourceFile: src.file,
    });
  }
  return out;
}

/** Whole tokens from `start` to the end of its line, within `max` characters (at least the first token). */
function continuation(text: string, start: number, max: number): string {
  const eol = text.indexOf('\n', start);
  const limit = Math.min(eol < 0 ? text.length : eol, start + max);
  let end = tokenAt(text, start)!.end;
  for (let t = tokenAt(text, end); t && t.end <= limit && !text.slice(end, t.start).includes('\n'); t = tokenAt(text, t.end)) end = t.end;
  return text.slice(start, end);
}

const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;
