// Small records a backend keeps about a run (pid, job id, exit code, stamps, launch count, captured logs): read back
// by any worker. They live in the run's launch directory, a sibling of the run directory that the trainer never sees
// (only the run directory is bound into its sandbox), so nothing the trainer writes can forge them.
import fs from 'node:fs';

/** The launcher-owned sibling of a run directory: `<runDir>.launch`. */
export function launchDirOf(runDir: string): string {
  return `${runDir.replace(/\/+$/, '')}.launch`;
}

/** The file's trimmed text, or undefined when it is missing or empty. */
export function readTrimmed(file: string): string | undefined {
  try {
    const s = fs.readFileSync(file, 'utf8').trim();
    return s === '' ? undefined : s;
  } catch {
    return undefined;
  }
}
