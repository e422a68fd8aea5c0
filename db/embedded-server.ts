// The embedded PostgreSQL of the default stack: a real server from the `embedded-postgres` package,
// data in a local folder, kept across restarts. Used by `flywheel up` and by the tests when no DATABASE_URL is set.
// It trusts no one by default: a random superuser password per data dir (a 0600 file beside it), scram-sha-256 for
// every connection, TCP on 127.0.0.1 only and its socket in a 0700 folder beside the data dir (db/embedded-auth.ts).
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { ensureSuperuserPassword, SUPERUSER, withInitdbPasswordFile, writePgHba } from './embedded-auth';
import { withoutForeignSignalHandlers } from './foreign-signal-handlers';
import { randomPassword } from './scram-verifier';
import { readOrCreateSecretFile } from './secret-file';
import { serverOsUser, type ServerOsUser } from './server-os-user';

export interface EmbeddedPgOptions {
  /** Folder for the cluster's files; created and initialised on first start. */
  dataDir: string;
  /** @default 54329 */
  port?: number;
  /** Receives the server's log lines. @default discard */
  onLog?: (line: string) => void;
}

export interface EmbeddedPg {
  /**
   * The superuser's URL (the `postgres` database), password included: for CREATE DATABASE, migrations and roles.
   * It stays in the process that started the server; workers get the application role's (db/app-role.ts).
   */
  adminUrl: string;
  port: number;
  pid: number | undefined;
  /** Whether this start created the cluster (a cold start). */
  created: boolean;
  /** Whether this start replaced the fixed password of a cluster made by an older Flywheel. */
  replacedLegacyPassword: boolean;
  /** The 0600 file holding the superuser's password. */
  passwordFile: string;
  /** The server's Unix-socket folder (mode 0700, owned by the server's user). */
  socketDir: string;
  stop(): Promise<void>;
}

/** Where a data dir's password file and socket folder live: beside it, named after it (`pg` → `pg-socket`). */
export function embeddedPgPaths(dataDir: string): { passwordFile: string; socketDir: string } {
  const d = path.resolve(dataDir);
  return { passwordFile: `${d}-superuser-password`, socketDir: `${d}-socket` };
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

/** A Unix socket's path must fit sockaddr_un (108 bytes on Linux, 104 on macOS, with the terminating NUL). */
const MAX_SOCKET_PATH = process.platform === 'darwin' ? 103 : 107;

/** Starts (and on first use initialises) the cluster. The package's own SIGINT/exit hooks are removed. */
export function startEmbeddedPostgres(opts: EmbeddedPgOptions): Promise<EmbeddedPg> {
  return withoutForeignSignalHandlers(() => start(opts));
}

async function start(opts: EmbeddedPgOptions): Promise<EmbeddedPg> {
  const port = opts.port ?? 54329;
  // The server's last lines, for the one line a failed start says (embedded-postgres rejects with no reason).
  const lastLines: string[] = [];
  const log = (line: string) => {
    if (line.trim()) lastLines.push(line.trim());
    if (lastLines.length > 5) lastLines.shift();
    opts.onLog?.(line);
  };
  const dataDir = path.resolve(opts.dataDir);
  const { passwordFile, socketDir } = embeddedPgPaths(dataDir);
  checkSocketPath(socketDir, port);
  const created = !fs.existsSync(path.join(dataDir, 'PG_VERSION'));
  clearStalePid(dataDir);
  const user = serverOsUser();
  const { secret: password } = readOrCreateSecretFile(passwordFile, randomPassword);
  prepareSocketDir(socketDir, user);
  const initdbPasswordFile = path.join(socketDir, '.initdb-password');
  const { default: EmbeddedPostgres } = await nativeImport('embedded-postgres');
  const pg = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: SUPERUSER,
    // embedded-postgres writes this one to a world-readable file in the temp folder for initdb, so it is a throwaway:
    // initdb takes the last --pwfile it is given, ours below.
    password: randomPassword(),
    authMethod: 'scram-sha-256',
    initdbFlags: [`--pwfile=${initdbPasswordFile}`],
    persistent: true,
    createPostgresUser: user.other,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1'],
      // Double quotes keep a path with a comma or a space one entry of the list.
      ...['-c', `unix_socket_directories="${socketDir}"`, '-c', 'unix_socket_permissions=0700'],
      ...['-c', 'password_encryption=scram-sha-256', '-c', 'max_connections=200', '-c', 'fsync=on'],
    ],
    onLog: (m: unknown) => log(String(m).trimEnd()),
    onError: (e: unknown) => log(`[error] ${e instanceof Error ? e.message : String(e)}`),
  });
  if (created) {
    fs.mkdirSync(path.dirname(dataDir), { recursive: true });
    await withInitdbPasswordFile(initdbPasswordFile, password, user, () => pg.initialise());
  }
  writePgHba(dataDir, user);
  await pg.start().catch((e: unknown) => {
    const why = e instanceof Error ? e.message : (lastLines.find((l) => /FATAL|ERROR|could not/i.test(l)) ?? lastLines.at(-1));
    throw new Error(
      `the embedded PostgreSQL did not start on 127.0.0.1:${port} (${dataDir}): ${why ?? 'no reason given (is the port in use?)'}`,
    );
  });
  const adminUrl = `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/postgres`;
  const proc = (pg as unknown as { process?: { pid?: number } }).process;
  try {
    const { replacedLegacy } = await ensureSuperuserPassword(adminUrl, password, { dataDir, passwordFile });
    if (replacedLegacy) log(`[flywheel] replaced the superuser's fixed password with the random one in ${passwordFile}`);
    return {
      adminUrl,
      port,
      pid: proc?.pid,
      created,
      replacedLegacyPassword: replacedLegacy,
      passwordFile,
      socketDir,
      stop: () => pg.stop(),
    };
  } catch (e) {
    await pg.stop().catch(() => undefined);
    throw e;
  }
}

function checkSocketPath(socketDir: string, port: number): void {
  const socket = path.join(socketDir, `.s.PGSQL.${port}`);
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new Error(
      `the embedded PostgreSQL's socket path ${socket} is ${Buffer.byteLength(socket)} bytes, more than a Unix socket allows ` +
        `(${MAX_SOCKET_PATH}): use a shorter FLYWHEEL_HOME, or set DATABASE_URL`,
    );
  }
  if (socketDir.includes('"')) throw new Error(`the embedded PostgreSQL's socket folder ${socketDir} has a double quote in its path`);
}

/**
 * The socket folder: a real folder (not a link), mode 0700, owned by the server's user, so that only that user (and
 * root) can reach the socket at all; a password is still needed once there. Fixed up on every start.
 */
function prepareSocketDir(dir: string, user: ServerOsUser): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`the embedded PostgreSQL's socket folder ${dir} is not a folder`);
  fs.chmodSync(dir, 0o700);
  if (user.other) fs.chownSync(dir, user.uid, user.gid);
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

/** Creates database `name` on the server at `url` (an admin's) if it does not exist; returns the URL of that database. */
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
