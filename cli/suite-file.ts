// Reads an eval suite file for `flywheel suite add` in bounded memory and time (caps: core/eval-suite/suite-limits.ts):
// at most 64 MiB read, UTF-8 or refused with the line and byte offset, JSON parsed by JSON.parse after its values are
// counted, anything else as YAML up to 1 MiB (the YAML parser holds many times its input). Every refusal is one line
// that starts with the file, and the CLI exits 2.
import fs from 'node:fs';
import { MAX_SUITE_FILE_BYTES, MAX_SUITE_JSON_VALUES, MAX_SUITE_YAML_BYTES } from '../core/eval-suite/suite-limits';
import { UsageError } from '../core/errors';
import { decodeUtf8File, parseYamlText, readCappedFile, sizeOf, yamlToJs } from './text-file';

/** A suite file that cannot be read or parsed (as opposed to MalformedSuiteError: parsed, but not a valid suite). */
export class SuiteFileError extends UsageError {}

const fail = (message: string) => new SuiteFileError(message);

export interface SuiteFile {
  /** The parsed, not yet validated content. */
  raw: unknown;
  /** The file's absolute path with every link resolved: what the suite records as its source. */
  realPath: string;
}

export function readSuiteFile(file: string): SuiteFile {
  const bytes = readCappedFile(file, MAX_SUITE_FILE_BYTES, 'a suite file', fail);
  const text = decodeUtf8File(file, bytes, 'a suite file', fail);
  return { raw: parseSuiteText(file, text, bytes.length), realPath: fs.realpathSync(file) };
}

function parseSuiteText(file: string, text: string, bytes: number): unknown {
  let jsonProblem: string | undefined;
  if (/^\s*[{[]/.test(text)) {
    const values = jsonValuesAtMost(text, MAX_SUITE_JSON_VALUES);
    if (values > MAX_SUITE_JSON_VALUES)
      throw fail(`${file}: more than ${MAX_SUITE_JSON_VALUES} JSON values, more than a suite file may hold`);
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      // Not JSON: perhaps YAML's flow style, which starts the same way.
      jsonProblem = (e as Error).message;
    }
  }
  if (bytes > MAX_SUITE_YAML_BYTES)
    throw fail(
      `${file}: cannot parse: ${jsonProblem ? `not JSON (${jsonProblem}), and ` : ''}more than a YAML suite file may be (${sizeOf(MAX_SUITE_YAML_BYTES)}); a larger suite is written as JSON (up to ${sizeOf(MAX_SUITE_FILE_BYTES)})`,
    );
  return yamlToJs(file, parseYamlText(file, text, fail), fail);
}

/**
 * How many values the JSON text holds, counting up to `limit + 1` (then it stops): every value but a container's
 * first follows a comma, and every container opens with a bracket, so commas and brackets outside strings bound it.
 */
function jsonValuesAtMost(text: string, limit: number): number {
  let values = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if ((c === 0x2c || c === 0x5b || c === 0x7b) && ++values > limit) return values;
  }
  return values;
}
