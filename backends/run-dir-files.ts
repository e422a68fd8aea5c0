// Small records a backend keeps in a run directory (pid, job id, exit code, stamps): read back by any worker.
import fs from 'node:fs';

/** The file's trimmed text, or undefined when it is missing or empty. */
export function readTrimmed(file: string): string | undefined {
  try {
    const s = fs.readFileSync(file, 'utf8').trim();
    return s === '' ? undefined : s;
  } catch {
    return undefined;
  }
}
