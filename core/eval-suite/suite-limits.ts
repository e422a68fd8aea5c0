// What a suite file may hold, so that `flywheel suite add` reads any file in bounded memory and time: caps on the file,
// its values, its items and each text field, set well above what a real suite needs (docs/suites.md lists them with
// their refusals). A 60 MB prompt once cost 2.4 GB to register; the parsers themselves cost a multiple of their input.
import { utf8ByteLength } from '../utf8-bytes';

/** The largest suite file read, in bytes (JSON; a suite of 100,000 items of 600 bytes each fits). */
export const MAX_SUITE_FILE_BYTES = 64 << 20;

/**
 * The largest suite file read as YAML. The YAML parser holds 50 to 500 times its input (4 MiB of `{},` took 1.9 GB and
 * 19 s), so a larger suite is written as JSON, which is parsed by JSON.parse.
 */
export const MAX_SUITE_YAML_BYTES = 1 << 20;

/**
 * The most JSON values (objects, arrays, strings, numbers, literals) a JSON suite file may hold, counted before it is
 * parsed: 64 MiB of `{},` took JSON.parse 2.2 GB. A real item is about 12 values.
 */
export const MAX_SUITE_JSON_VALUES = 4_000_000;

/** The most items a suite may have. */
export const MAX_SUITE_ITEMS = 100_000;

/** The longest text field (a prompt, a reference, a test program, a rubric, a canary), in UTF-8 bytes. */
export const MAX_SUITE_FIELD_BYTES = 1 << 20;

/**
 * Every string in the parsed suite longer than {@link MAX_SUITE_FIELD_BYTES}, as `path: N bytes, more than …`
 * (`items[3] "id": prompt: …`): checked before the schema, which would otherwise copy and hash them.
 */
export function oversizedFields(raw: unknown): string[] {
  const problems: string[] = [];
  const walk = (value: unknown, path: string, at: (path: string) => string) => {
    if (typeof value === 'string') {
      // Each UTF-16 unit is at least one byte: most strings are decided by their length alone.
      if (
        value.length > MAX_SUITE_FIELD_BYTES / 3 &&
        (value.length > MAX_SUITE_FIELD_BYTES || utf8ByteLength(value) > MAX_SUITE_FIELD_BYTES)
      )
        problems.push(`${at(path)}: ${utf8ByteLength(value)} bytes, more than a field may be (${MAX_SUITE_FIELD_BYTES >> 20} MiB)`);
    } else if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`, at));
    else if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k, at);
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return problems;
  for (const [k, v] of Object.entries(raw)) {
    if (k === 'items' && Array.isArray(v)) v.forEach((item, i) => walk(item, '', (path) => `${itemLabel(item, i)}: ${path || '(item)'}`));
    else walk(v, k, (path) => path);
  }
  return problems;
}

/** How a refusal names an item: `items[3] "id"` (the id only when it is a string of a sane length). */
export function itemLabel(raw: unknown, index: number): string {
  const id = (raw as { id?: unknown } | null)?.id;
  return `items[${index}]${typeof id === 'string' && id.length <= 120 ? ` "${id}"` : ''}`;
}
