// The embedded PostgreSQL of the default stack: a real server from the `embedded-postgres` package,
// data in a local folder, kept across restarts. Used by `flywheel up` and by the tests when no DATABASE_URL is set.
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { withoutForeignSignalHandlers } from './foreign-signal-handlers';

export interface EmbeddedPgOptions {
  /** Folder for the cluster's files; created and initialised on first start. */
  dataDir: string;
  /** @default 54329 */
  port?: number;
  /** Receives the server's log lines. @default discard */
  onLog?: (line: string) => void;
}

export interface EmbeddedPg {
  url: string;
  port: number;
  pid: number | undefined;
  /** Whether this start created the cluster (a cold start). */
  created: boolean;
  stop(): Promise<void>;
}

/** The slice of embedded-postgres's API we use (the package is ESM-only, so it is loaded with a native import). */
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresCtor = new (opts: Record<string, unknown>) => EmbeddedPostgresInstance;

// A native dynamic import that test transforms cannot rewrite into require().
const nativeImport = new Function('m', 'return import(m)') as (m: string) => Promise<{ default: EmbeddedPostgresCtor }>;

const USER = 'postgres';
const PASSWORD = 'flywheel';

/** Starts (and on first use initialises) the cluster. The package's own SIGINT/exit hooks are removed. */
export function startEmbeddedPostgres(opts: EmbeddedPgOptions): Promise<EmbeddedPg> {
  return withoutForeignSignalHandlers(() => start(opts));
}

async function start(opts: EmbeddedPgOptions): Promise<EmbeddedPg> {
  const port = opts.port ?? 54329;
  const log = opts.onLog ?? (() => undefined);
  const dataDir = path.resolve(opts.dataDir);
  const created = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  clearStalePid(dataDir);
  const { default: EmbeddedPostgres } = await nativeImport('embedded-postgres');
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: (m: unknown) => log(String(m).trimEnd()),
    onError: (e: unknown) => log(`[error] ${e instanceof Error ? e.message : String(e)}`),
  });
  if (created) {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    await pg.initialise();
  }
  await pg.start();
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  const proc = (pg as unknown as { process?: { pid?: number } }).process;
  return { url, port, pid: proc?.pid, created, stop: () => pg.stop() };
}

/** A postmaster.pid left by a killed server whose process is gone would block the next start. */
function clearStalePid(dataDir: string): void {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  if (!fs.existsSync(pidFile)) return;
  const pid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (Number.isFinite(pid) && pid > 0 && isAlive(pid)) {
    throw new Error(`PostgreSQL is already running on ${dataDir} (pid ${pid}); stop it or set DATABASE_URL`);
  }
  fs.rmSync(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates database `name` on the server at `url` if it does not exist; returns the URL of that database. */
export async function ensureDatabase(url: string, name: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (r.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } catch (e) {
        // Two processes creating it together: the loser sees a duplicate.
        if (!/already exists|duplicate key/.test((e as Error).message)) throw e;
      }
    }
  } finally {
    await client.end();
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
