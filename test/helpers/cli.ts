// Runs the real `flywheel` command (bin/flywheel.js) in a child process, without blocking this process's event
// loop (workers a test starts live here).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { temporalAddress } from './env';

export const FLYWHEEL_BIN = path.join(__dirname, '..', '..', 'bin', 'flywheel.js');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(env: NodeJS.ProcessEnv, args: string[], timeout = 240_000): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [FLYWHEEL_BIN, ...args], { env, timeout, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}

/** The environment a CLI process needs to reach a test file's servers, database, home and queue prefix. */
export function cliEnv(h: { dbUrl: string; home: string }, prefix: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: temporalAddress(),
    DATABASE_URL: h.dbUrl,
    FLYWHEEL_HOME: h.home,
    FLYWHEEL_TASK_QUEUE_PREFIX: prefix,
    ...extra,
  };
}
