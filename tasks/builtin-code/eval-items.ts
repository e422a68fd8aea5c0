// Eval items of the built-in code task, built purely and deterministically from the files of one split:
// completion items (a prompt ending at a token boundary, graded on the next token) and loss chunks (bits per byte).
// Splits are by file, by a stable hash of its path, so no held-out file ever reaches the training text. Items are
// drawn uniformly over a split's positions, but no file gives more than about twice its even share: the gate flips the
// items of one file as one cluster (core/gate/item-layout.ts), and a draw that a few large files fill could never be
// significant.
import { createHash } from 'node:crypto';
import { Rng } from '../../core/stream-rng';
import { tokenAt, type TokenClass } from '../../core/graders/code-tokens';

export type Split = 'train' | 'public' | 'heldout';
/** What an item is cut for: a split of the corpus's files, or the sealed test split (files the package cap leaves out). */
export type ItemSplit = Split | 'test';

export interface SourceFile {
  /** Stable path, e.g. `zod/src/v4/core/api.ts` (the package name, then the path inside it). */
  file: string;
  text: string;
}

export interface CompletionItem {
  id: string;
  /** The text before the reference token, whitespace before the token included. */
  prompt: string;
  /** The token that follows (`firstToken` of the rest of the file). */
  reference: string;
  sourceFile: string;
  /** The reference's token class: identifier, keyword, number, operator, punct. */
  category: TokenClass;
  language: Language;
  grader: 'exact_token';
}

export interface LossItem {
  id: string;
  prompt: '';
  /** A chunk of a file, scored in bits per byte with no prompt. */
  reference: string;
  sourceFile: string;
  /** The file's language. */
  category: Language;
  language: Language;
  grader: 'bits_per_byte';
}

export type Language = 'typescript' | 'javascript' | 'other';

export interface CompletionItemOptions {
  /** Items wanted (fewer if the split has fewer eligible positions). */
  count: number;
  /** Chooses the positions and prompt lengths. */
  seed: number;
  /** @default 64 */
  minPrompt?: number;
  /** @default 160 */
  maxPrompt?: number;
}

export interface LossItemOptions {
  count: number;
  seed: number;
  /** Characters per chunk (bytes, for the ASCII corpus). @default 256 */
  chunkBytes?: number;
}

/** References longer than this are generated names or data, not something to complete. */
const MAX_REFERENCE = 40;

/** 80 % train, 10 % public, 10 % held-out, by a hash of the path alone (stable across versions and runs). */
export function splitOfFile(path: string): Split {
  const h = createHash('sha256').update(`flywheel-split-v1\0${path}`).digest().readUInt32BE(0) % 100;
  return h < 80 ? 'train' : h < 90 ? 'public' : 'heldout';
}

/**
 * The files the corpus's package cap leaves out (corpus.ts; in no training, public or held-out file) go half to the
 * held-out split, half to the sealed test split, by a hash of the path: the held-out split's 10 corpus files alone were
 * too few clusters for the gate's cluster test.
 */
export function spareSplitOf(path: string): 'heldout' | 'test' {
  const h = createHash('sha256').update(`flywheel-spare-split-v1\0${path}`).digest().readUInt32BE(0) % 100;
  return h < 50 ? 'heldout' : 'test';
}

export function languageOf(path: string): Language {
  if (/\.(ts|mts|cts|tsx)$/.test(path)) return 'typescript';
  if (/\.(js|mjs|cjs|jsx)$/.test(path)) return 'javascript';
  return 'other';
}

function itemId(kind: 'c' | 'l', split: ItemSplit, file: string, offset: number): string {
  return `${kind}-${createHash('sha256').update(`${split}\0${file}\0${offset}`).digest('hex').slice(0, 16)}`;
}

export function buildCompletionItems(split: ItemSplit, files: readonly SourceFile[], opts: CompletionItemOptions): CompletionItem[] {
  const minPrompt = opts.minPrompt ?? 64;
  const maxPrompt = opts.maxPrompt ?? 160;
  const sorted = [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const candidates: { f: number; start: number; end: number; cls: TokenClass }[] = [];
  sorted.forEach((src, f) => {
    const code = codeMask(src.text);
    // Tokenize from the start of the file so every candidate begins at a real token boundary.
    for (let t = tokenAt(src.text, 0); t; t = tokenAt(src.text, t.end)) {
      if (t.start < minPrompt || !code[t.start] || t.cls === 'other' || t.end - t.start > MAX_REFERENCE) continue;
      candidates.push({ f, start: t.start, end: t.end, cls: t.cls });
    }
  });
  const rng = Rng.derive(opts.seed, `completion-items:${split}`);
  return chooseCapped(
    candidates.map((c) => c.f),
    opts.count,
    rng,
  ).map((i) => {
    const c = candidates[i];
    const src = sorted[c.f];
    const len = minPrompt + rng.int(maxPrompt - minPrompt + 1);
    return {
      id: itemId('c', split, src.file, c.start),
      prompt: src.text.slice(Math.max(0, c.start - len), c.start),
      reference: src.text.slice(c.start, c.end),
      sourceFile: src.file,
      category: c.cls,
      language: languageOf(src.file),
      grader: 'exact_token' as const,
    };
  });
}

export function buildLossItems(split: ItemSplit, files: readonly SourceFile[], opts: LossItemOptions): LossItem[] {
  const size = opts.chunkBytes ?? 256;
  const sorted = [...files].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const chunks: { f: number; offset: number }[] = [];
  sorted.forEach((src, f) => {
    for (let offset = 0; offset + size <= src.text.length; offset += size) {
      if (src.text.slice(offset, offset + size).trim() !== '') chunks.push({ f, offset });
    }
  });
  const rng = Rng.derive(opts.seed, `loss-items:${split}`);
  return chooseCapped(
    chunks.map((c) => c.f),
    opts.count,
    rng,
  ).map((i) => {
    const { f, offset } = chunks[i];
    const src = sorted[f];
    const language = languageOf(src.file);
    return {
      id: itemId('l', split, src.file, offset),
      prompt: '' as const,
      reference: src.text.slice(offset, offset + size),
      sourceFile: src.file,
      category: language,
      language,
      grader: 'bits_per_byte' as const,
    };
  });
}

/**
 * `k` distinct indices of the candidates (`fileOf[i]`: candidate i's file), uniformly shuffled and taken in that order,
 * but at most `cap` from one file: cap = ⌈2k / files⌉, raised only where the files could not hold k under it. Returned
 * in increasing order.
 */
function chooseCapped(fileOf: readonly number[], k: number, rng: Rng): number[] {
  const n = fileOf.length;
  const sizes = new Map<number, number>();
  for (const f of fileOf) sizes.set(f, (sizes.get(f) ?? 0) + 1);
  const m = Math.min(n, k);
  const held = (c: number) => [...sizes.values()].reduce((s, x) => s + Math.min(c, x), 0);
  let cap = Math.max(1, Math.ceil((2 * m) / Math.max(1, sizes.size)));
  while (held(cap) < m) cap += 1;
  const idx = Array.from({ length: n }, (_, i) => i);
  const taken = new Map<number, number>();
  const out: number[] = [];
  for (let i = 0; i < n && out.length < m; i++) {
    const j = i + rng.int(n - i);
    [idx[i], idx[j]] = [idx[j], idx[i]];
    const f = fileOf[idx[i]];
    if ((taken.get(f) ?? 0) >= cap) continue;
    taken.set(f, (taken.get(f) ?? 0) + 1);
    out.push(idx[i]);
  }
  return out.sort((a, b) => a - b);
}

/**
 * 1 where a character is code, 0 inside comments and string literals (a small JS/TS scanner: template
 * literals end at the next backtick, quoted strings at a newline, regex literals are not recognised).
 * Completion references are taken from code only: prose in comments is not what the task measures.
 */
export function codeMask(s: string): Uint8Array {
  const mask = new Uint8Array(s.length);
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    const next = s[i + 1];
    let end: number;
    if (c === '/' && next === '/') {
      end = s.indexOf('\n', i);
    } else if (c === '/' && next === '*') {
      end = s.indexOf('*/', i + 2);
      if (end >= 0) end += 2;
    } else if (c === '"' || c === "'" || c === '`') {
      end = i + 1;
      while (end < s.length && s[end] !== c && !(c !== '`' && s[end] === '\n')) end += s[end] === '\\' ? 2 : 1;
      end += 1;
    } else {
      mask[i] = 1;
      i++;
      continue;
    }
    i = end < 0 ? s.length : Math.min(end, s.length);
  }
  return mask;
}
