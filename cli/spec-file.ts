// Reads a campaign spec file (YAML, or JSON — which YAML also parses) and validates it with parseSpec.
// Shared by `flywheel validate` and `flywheel run`. Every problem is one line that starts with the file's path
// (`FILE: …` or `FILE:LINE:COL: …`) and exits 2; a file too large, not UTF-8 or an alias bomb is refused before
// it can cost more than a parse of MAX_SPEC_BYTES.
import { isMap } from 'yaml';
import { InvalidSpecError, type CampaignSpec } from '../core/spec';
import { parseSpec } from '../services/task-registry';
import { UsageError } from '../core/errors';
import { decodeUtf8File, parseYamlText, readCappedFile, yamlToJs } from './text-file';

/**
 * The largest spec file read. Real specs are a few KB; the YAML parser's own duplicate-key check is quadratic (a
 * 5 MB file of junk keys took 118 s), so keys are checked in one pass (cli/text-file.ts), and the size is capped as well.
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
  const fail = (message: string) => new SpecFileError(message);
  const bytes = readCappedFile(file, MAX_SPEC_BYTES, 'a campaign spec', fail);
  const doc = parseYamlText(file, decodeUtf8File(file, bytes, 'a campaign spec', fail), fail);
  const raw = yamlToJs(file, doc, fail);
  if (raw === null || raw === undefined) throw new SpecFileError(`${file}: empty, no campaign spec in it`);
  if (!isMap(doc.contents))
    throw new SpecFileError(
      `${file}: a campaign spec is a mapping of fields (name:, searchSpace:, …), not a ${Array.isArray(raw) ? 'list' : typeof raw}`,
    );
  return raw;
}
