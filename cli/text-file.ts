// Reading a text file a user hands the CLI (a campaign spec, an eval suite) in bounded memory: never more than its cap
// is read, the bytes must be UTF-8 (a refusal names the line and byte offset rather than reading U+FFFD), and YAML is
// parsed with a linear duplicate-key check and capped aliases. Every refusal is one line that starts with the file.
import fs from 'node:fs';
import { isScalar, LineCounter, parseDocument, visit, type Document } from 'yaml';
import { decodeUtf8 } from '../core/utf8-bytes';

/** Makes the caller's error (a UsageError subclass, so the CLI exits 2) from a one-line message. */
export type FileError = (message: string) => Error;

/** `256 KiB`, `64 MiB`: a cap as the refusals print it. */
export const sizeOf = (bytes: number): string => (bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${bytes / 1024} KiB`);

/**
 * The file's bytes, at most `maxBytes`. The size is checked on the open file before anything is read, and the read
 * stops one byte past the cap, so a file that grows meanwhile (or a pipe, whose size says nothing) is refused too.
 * `what` names the kind of file in the refusal (`a campaign spec`).
 */
export function readCappedFile(file: string, maxBytes: number, what: string, fail: FileError): Buffer {
  const tooBig = (size?: number) =>
    fail(`${file}: ${size === undefined ? '' : `${size} bytes, `}more than ${what} may be (${sizeOf(maxBytes)})`);
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw fail(`${file}: cannot read: ${why(e)}`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) throw fail(`${file}: cannot read: it is a folder`);
    if (stat.size > maxBytes) throw tooBig(stat.size);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(maxBytes + 1 - total, Math.max(stat.size + 1 - total, 1 << 16)));
      const got = readSome(file, fd, buf, fail);
      if (got === 0) break;
      chunks.push(buf.subarray(0, got));
      total += got;
      if (total > maxBytes) throw tooBig();
    }
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
  } finally {
    fs.closeSync(fd);
  }
}

function readSome(file: string, fd: number, buf: Buffer, fail: FileError): number {
  try {
    return fs.readSync(fd, buf, 0, buf.length, null);
  } catch (e) {
    throw fail(`${file}: cannot read: ${why(e)}`);
  }
}

/** The text, or the caller's error naming the line and byte offset where the bytes stop being UTF-8. */
export function decodeUtf8File(file: string, bytes: Uint8Array, what: string, fail: FileError): string {
  const r = decodeUtf8(bytes);
  if ('text' in r) return r.text;
  throw fail(`${file}:${r.line}: not valid UTF-8 at byte offset ${r.offset} (${what} is UTF-8 text)`);
}

/**
 * The YAML (or JSON) document, not yet converted: a parse error or a repeated key is the caller's error at its line
 * and column. The yaml library's own duplicate-key check is quadratic (a 5 MB file of junk keys took it 118 s), so
 * keys are checked here in one pass.
 */
export function parseYamlText(file: string, text: string, fail: FileError): Document.Parsed {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false, lineCounter });
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0];
    throw fail(
      `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: cannot parse: ${err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
    );
  }
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const k = String(pair.key.value);
        if (seen.has(k)) {
          const pos = pair.key.range ? lineCounter.linePos(pair.key.range[0]) : undefined;
          throw fail(`${file}${pos ? `:${pos.line}:${pos.col}` : ''}: cannot parse: duplicate key "${k}"`);
        }
        seen.add(k);
      }
    },
  });
  return doc;
}

/** The document as plain values; aliases expand at most `maxAliasCount` times (an alias bomb is refused). */
export function yamlToJs(file: string, doc: Document.Parsed, fail: FileError): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw fail(`${file}: cannot parse: ${(e as Error).message}`);
  }
}

function why(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT'
    ? 'no such file'
    : code === 'EISDIR'
      ? 'it is a folder'
      : code === 'EACCES'
        ? 'permission denied'
        : (code ?? String(e));
}
