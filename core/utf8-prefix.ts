// Cutting text to a byte budget without splitting a character: a completion is asked for in UTF-8 bytes.

/** The longest prefix of `s` that is at most `maxBytes` bytes in UTF-8, never ending inside a character. */
export function utf8Prefix(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s;
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > maxBytes) break;
    bytes += n;
    end += ch.length;
  }
  return s.slice(0, end);
}
