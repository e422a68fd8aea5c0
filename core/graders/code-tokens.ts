// Code tokens for the exact-token completion grader: a completion passes when its first token equals the
// reference token. One rule for both sides, so whitespace before the token never decides a grade.

export type TokenClass = 'identifier' | 'keyword' | 'number' | 'operator' | 'punct' | 'other';

export interface TokenSpan {
  start: number;
  end: number;
  cls: TokenClass;
}

const KEYWORDS = new Set(
  (
    'abstract any as async await boolean break case catch class const constructor continue debugger declare default ' +
    'delete do else enum export extends false finally for from function get if implements import in infer instanceof ' +
    'interface is keyof let module namespace never new null number object of override package private protected public ' +
    'readonly require return satisfies set static string super switch symbol this throw true try type typeof undefined ' +
    'unique unknown var void while with yield'
  ).split(' '),
);

const isSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);
const isIdentStart = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x24; // A-Z a-z _ $
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isIdentPart = (c: number): boolean => isIdentStart(c) || isDigit(c);
/** Characters that chain into one operator token: `===`, `=>`, `?.`, `...`, `&&=`. */
const OPERATOR_CHARS = new Set('+-*/%=<>!&|^~?:.@#\\');
/** Characters that are always a token on their own. */
const PUNCT_CHARS = new Set('()[]{},;\'"`');

/** The first token at or after `from` (whitespace skipped), or null if only whitespace is left. */
export function tokenAt(s: string, from = 0): TokenSpan | null {
  let i = from;
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  if (i >= s.length) return null;
  const start = i;
  const c = s.charCodeAt(i);
  if (isIdentStart(c)) {
    while (i < s.length && isIdentPart(s.charCodeAt(i))) i++;
    return { start, end: i, cls: KEYWORDS.has(s.slice(start, i)) ? 'keyword' : 'identifier' };
  }
  if (isDigit(c)) {
    // 42, 0x1f, 1_000n, 3.14, 1e5: digits and letters, and one decimal point followed by a digit.
    while (i < s.length && isIdentPart(s.charCodeAt(i))) i++;
    if (s[i] === '.' && isDigit(s.charCodeAt(i + 1))) {
      i++;
      while (i < s.length && isIdentPart(s.charCodeAt(i))) i++;
    }
    return { start, end: i, cls: 'number' };
  }
  const ch = s[i];
  if (OPERATOR_CHARS.has(ch)) {
    while (i < s.length && OPERATOR_CHARS.has(s[i])) i++;
    return { start, end: i, cls: 'operator' };
  }
  if (PUNCT_CHARS.has(ch)) return { start, end: i + 1, cls: 'punct' };
  const cp = s.codePointAt(i) ?? c;
  return { start, end: i + (cp > 0xffff ? 2 : 1), cls: 'other' };
}

/** The next token of code in `s`, leading whitespace skipped; '' when `s` is blank. */
export function firstToken(s: string): string {
  const t = tokenAt(s);
  return t ? s.slice(t.start, t.end) : '';
}

/** Every token of `s` in order (no comment or string awareness: see eval-items for that). */
export function tokenize(s: string): TokenSpan[] {
  const out: TokenSpan[] = [];
  for (let t = tokenAt(s, 0); t; t = tokenAt(s, t.end)) out.push(t);
  return out;
}
