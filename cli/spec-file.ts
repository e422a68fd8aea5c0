// Reads a campaign spec file (YAML, or JSON — which YAML also parses) and validates it with parseSpec.
// Shared by `flywheel validate` and `flywheel run`.
import fs from 'node:fs';
import { parseDocument } from 'yaml';
import { parseSpec, type CampaignSpec } from '../core/spec';

/** The file could not be read or parsed (as opposed to InvalidSpecError: parsed, but not a valid spec). */
export class SpecFileError extends Error {
  override readonly name = 'SpecFileError';
}

/** Reads, parses and validates `file`; throws SpecFileError or InvalidSpecError (whose problems name each path). */
export function loadSpecFile(file: string): CampaignSpec {
  return parseSpec(readSpecFile(file), file);
}

/** The parsed but unvalidated content of a spec file. */
export function readSpecFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a folder' : (code ?? String(e));
    throw new SpecFileError(`cannot read ${file}: ${why}`);
  }
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0];
    throw new SpecFileError(`${file}${pos ? `:${pos.line}:${pos.col}` : ''}: cannot parse: ${err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  const raw: unknown = doc.toJS();
  if (raw === null || raw === undefined) throw new SpecFileError(`${file} is empty`);
  return raw;
}
