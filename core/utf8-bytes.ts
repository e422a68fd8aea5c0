// Text as UTF-8 bytes, for the caps and refusals of files and bodies users send: how many bytes a string takes, and
// where a byte sequence stops being UTF-8 (a refusal names the offset instead of storing U+FFFD in its place).

/** The length of `s` in UTF-8 bytes, without encoding it. */
export function utf8ByteLength(s: string): number {
  let bytes = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) bytes += 1;
    else {
      // 3 bytes; a surrogate pair (two units) is 4, an unpaired surrogate is written as U+FFFD (3).
      bytes += 2;
      if (c >= 0xd800 && c < 0xdc00 && isLow(s.charCodeAt(i + 1))) i++;
    }
  }
  return bytes;
}

const isLow = (c: number) => c >= 0xdc00 && c < 0xe000;

/** The offset where the first invalid UTF-8 sequence of `bytes` starts, or -1 when all of it is UTF-8. */
export function firstBadUtf8Byte(bytes: Uint8Array): number {
  const strict = new TextDecoder('utf-8', { fatal: true });
  for (let i = 0; i < bytes.length;) {
    const c = bytes[i];
    const n = c < 0x80 ? 1 : c >= 0xc2 && c < 0xe0 ? 2 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xf0 && c < 0xf5 ? 4 : 0;
    if (n === 0 || i + n > bytes.length) return i;
    if (n > 1) {
      // The decoder knows the finer rules (overlong forms, surrogates, past U+10FFFF) for one sequence at a time.
      try {
        strict.decode(bytes.subarray(i, i + n));
      } catch {
        return i;
      }
    }
    i += n;
  }
  return -1;
}

/** `bytes` decoded, or where they stop being UTF-8: the byte offset and its 1-based line. */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { offset: number; line: number } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    const offset = Math.max(0, firstBadUtf8Byte(bytes));
    let line = 1;
    for (let i = 0; i < offset; i++) if (bytes[i] === 0x0a) line++;
    return { offset, line };
  }
}
