// Reads a campaign spec file (YAML, or JSON — which YAML also parses) and validates it with parseSpec.
// Shared by `flywheel validate` and `flywheel run`. Every problem is one line that starts with the file's path
// (`FILE: …` or `FILE:LINE:COL: …`) and exits 2; a file too large, not UTF-8 or an alias bomb is refused before
// it can cost more than a parse of MAX_SPEC_BYTES.
import fs from 'node:fs';
import { isMap, isScalar, LineCounter, parseDocument, visit } from 'yaml';
import { InvalidSpecError, parseSpec, type CampaignSpec } from '../core/spec';
import { UsageError } from '../core/errors';

/**
 * The largest spec file read. Real specs are a few KB; the YAML parser's own duplicate-key check is quadratic (a
 * 5 MB file of junk keys took 118 s), so keys are checked here in one pass, and the size is capped as well.
 */
export const MAX_SPEC_BYTES = 256 * 1024;

/** The file could not be read or parsed (as opposed to InvalidSpecError: parsed, but not a valid spec). */
export class SpecFileError extends UsageError {}

/** Reads, parses and validates `file`; throws SpecFileError or InvalidSpecError (whose problems name each path). */
export function loadSpecFile(file: string): CampaignSpec {
  const raw = readSpecFile(file);
  try {
    return parseSpec(raw, file);
  } catch (e) {
    // One line for the CLI; `problems` keeps one entry per problem for `flywheel validate`.
    if (e instanceof InvalidSpecError) e.message = `${file}: ${e.problems.join('; ')}`;
    throw e;
  }
}

/** The parsed but unvalidated content of a spec file. */
export function readSpecFile(file: string): unknown {
  const bytes = readCapped(file);
  const text = decodeUtf8(file, bytes);
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: false, lineCounter });
  const at = (offset: number | undefined) => {
    const pos = offset === undefined ? undefined : lineCounter.linePos(offset);
    return `${file}${pos ? `:${pos.line}:${pos.col}` : ''}`;
  };
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0];
    throw new SpecFileError(
      `${file}${pos ? `:${pos.line}:${pos.col}` : ''}: cannot parse: ${err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
    );
  }
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const k = String(pair.key.value);
        if (seen.has(k)) throw new SpecFileError(`${at(pair.key.range?.[0])}: cannot parse: duplicate key "${k}"`);
        seen.add(k);
      }
    },
  });
  let raw: unknown;
  try {
    // toJS expands aliases, and refuses (with the yaml library's reason) a document that expands past its limit.
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    throw new SpecFileError(`${file}: cannot parse: ${(e as Error).message}`);
  }
  if (raw === null || raw === undefined) throw new SpecFileError(`${file}: empty, no campaign spec in it`);
  if (!isMap(doc.contents))
    throw new SpecFileError(
      `${file}: a campaign spec is a mapping of fields (name:, searchSpace:, …), not a ${Array.isArray(raw) ? 'list' : typeof raw}`,
    );
  return raw;
}

function readCapped(file: string): Buffer {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw new SpecFileError(`${file}: cannot read: ${why(e)}`);
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (fs.fstatSync(fd).isDirectory()) throw new SpecFileError(`${file}: cannot read: it is a folder`);
    if (size > MAX_SPEC_BYTES)
      throw new SpecFileError(`${file}: ${size} bytes, more than a campaign spec may be (${MAX_SPEC_BYTES / 1024} KiB)`);
    const buf = Buffer.alloc(MAX_SPEC_BYTES + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    if (n > MAX_SPEC_BYTES) throw new SpecFileError(`${file}: more than a campaign spec may be (${MAX_SPEC_BYTES / 1024} KiB)`);
    return buf.subarray(0, n);
  } catch (e) {
    if (e instanceof SpecFileError) throw e;
    throw new SpecFileError(`${file}: cannot read: ${why(e)}`);
  } finally {
    fs.closeSync(fd);
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

/** The text, or a SpecFileError naming the first line that is not valid UTF-8 (a key would otherwise read garbled). */
function decodeUtf8(file: string, bytes: Buffer): string {
  const strict = new TextDecoder('utf-8', { fatal: true });
  try {
    return strict.decode(bytes);
  } catch {
    let line = 1;
    for (let start = 0; start < bytes.length; line++) {
      const nl = bytes.indexOf(0x0a, start);
      const end = nl < 0 ? bytes.length : nl;
      try {
        strict.decode(bytes.subarray(start, end));
      } catch {
        break;
      }
      start = end + 1;
    }
    throw new SpecFileError(`${file}:${line}: not valid UTF-8 (a campaign spec is UTF-8 text)`);
  }
}
