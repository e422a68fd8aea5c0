// The character n-grams the overlap check compares, as numbers: those of a text whose whitespace runs are collapsed to
// one space and trimmed (normalizeForOverlap), hashed in one pass over the text without making the normalized
// string, so checking a line costs a few integer operations a character (a million-line `dataset add` checks every
// line). Two rolling polynomial hashes modulo 2^32 with different odd bases (Math.imul; floating-point modulo made
// this 60 ns a character); the same n-gram always hashes the same, so no copy is missed, and a false match needs
// both hashes to collide.

const B1 = 0x01000193;
const B2 = 0x5bd1e995;

/** Runs of whitespace become one space, so re-indenting or re-wrapping a copied text does not hide it. */
export function normalizeForOverlap(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** The characters `\s` matches and `trim()` removes (ECMAScript's WhiteSpace and LineTerminator). */
export function isSpace(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Hashes texts' n-grams into arrays it reuses (one text at a time: read them before the next call). */
export class NgramHasher {
  /** The first and second hash of n-gram k, which is `normalizeForOverlap(text).slice(k, k + n)`. */
  h1 = new Int32Array(1024);
  h2 = new Int32Array(1024);
  private readonly ring: Int32Array;
  private readonly pow1: number;
  private readonly pow2: number;

  constructor(readonly n: number) {
    this.ring = new Int32Array(n);
    let pow1 = 1;
    let pow2 = 1;
    for (let i = 1; i < n; i++) {
      pow1 = Math.imul(pow1, B1);
      pow2 = Math.imul(pow2, B2);
    }
    [this.pow1, this.pow2] = [pow1, pow2];
  }

  /** The key of n-gram `g`, for a Map: its first hash and the top 21 bits of its second, one exact integer below 2^53. */
  key(g: number): number {
    return (this.h1[g] >>> 0) * 0x200000 + (this.h2[g] >>> 11);
  }

  /**
   * Where n-gram `g` falls in a bit filter of 2^(32 - shift) bits: the top bits of a multiplicative mix of both
   * hashes. (Methods rather than module functions: under tsx each read of an imported function is a getter call,
   * which cost more than the hashing in this loop.)
   */
  bit(g: number, shift: number): number {
    return Math.imul(this.h1[g] ^ Math.imul(this.h2[g], 0x9e3779b1), 0x85ebca6b) >>> shift;
  }

  /** Hashes every n-gram of the normalized `s` into `h1` and `h2`; returns how many there are. */
  hash(s: string): number {
    if (this.h1.length < s.length) {
      this.h1 = new Int32Array(s.length);
      this.h2 = new Int32Array(s.length);
    }
    const { n, ring, pow1, pow2, h1: out1, h2: out2 } = this;
    let h1 = 0;
    let h2 = 0;
    /** Normalized characters so far; the one n back is in ring[at]. */
    let length = 0;
    let at = 0;
    let count = 0;
    let space = false;
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (isSpace(c)) {
        // A run becomes one space, written only before the next character that is not one: both ends are trimmed.
        space = length > 0;
        continue;
      }
      if (space) {
        // The space first, then this character (the loop runs again on i).
        space = false;
        c = 0x20;
        i--;
      }
      if (length >= n) {
        h1 = (h1 - Math.imul(ring[at], pow1)) | 0;
        h2 = (h2 - Math.imul(ring[at], pow2)) | 0;
      }
      h1 = (Math.imul(h1, B1) + c) | 0;
      h2 = (Math.imul(h2, B2) + c) | 0;
      ring[at] = c;
      at = at + 1 === n ? 0 : at + 1;
      if (++length >= n) {
        out1[count] = h1;
        out2[count] = h2;
        count++;
      }
    }
    return count;
  }
}
