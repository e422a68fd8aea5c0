// The lines of a byte stream, one at a time, in bounded memory: a line longer than the limit is reported by its
// number and length, never held whole. Each line is decoded as strict UTF-8 (a line that is not is reported with the
// file offset of its first bad byte, not read with U+FFFD in place of its bytes). `\r\n` ends a line as `\n` does.
import { firstBadUtf8Byte } from '../../core/utf8-bytes';

export type Line =
  { line: number; text: string; bytesRead: number } | { line: number; text?: undefined; problem: string; bytesRead: number };

/**
 * Yields every line of `chunks` (a trailing newline does not make an empty last line), numbered from 1, with the
 * bytes read so far (for progress). A line over `maxBytes` bytes, or not UTF-8, comes with `problem` instead of text.
 */
export async function* readLines(chunks: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<Line> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let parts: Buffer[] = [];
  let partBytes = 0;
  let tooLong = false;
  let line = 0;
  let bytesRead = 0;
  /** Where the current line starts in the stream: a bad byte is named by its offset in the file. */
  let lineStart = 0;
  const finish = (last: Buffer): Line => {
    line++;
    const length = partBytes + last.length;
    if (tooLong || length > maxBytes) return { line, problem: `longer than ${maxBytes} bytes`, bytesRead };
    let bytes = parts.length ? Buffer.concat([...parts, last], length) : last;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    try {
      return { line, text: decoder.decode(bytes), bytesRead };
    } catch {
      return { line, problem: `not valid UTF-8 at byte offset ${lineStart + Math.max(0, firstBadUtf8Byte(bytes))}`, bytesRead };
    }
  };
  for await (const chunk of chunks) {
    const chunkStart = bytesRead;
    bytesRead += chunk.length;
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      yield finish(chunk.subarray(start, nl));
      parts = [];
      partBytes = 0;
      tooLong = false;
      start = nl + 1;
      lineStart = chunkStart + start;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      partBytes += rest.length;
      // Past the limit the line's bytes are dropped: only its length still counts.
      if (tooLong || partBytes > maxBytes) {
        tooLong = true;
        parts = [];
      } else parts.push(rest);
    }
  }
  if (partBytes > 0 || tooLong) yield finish(Buffer.alloc(0));
}
