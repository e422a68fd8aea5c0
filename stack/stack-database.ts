// The stack's PostgreSQL: DATABASE_URL when given, else the embedded server with data under FLYWHEEL_HOME;
// either way the `flywheel` schema is migrated once here, before any worker starts. On the embedded server this
// process alone holds the superuser's URL; the workers, the CLI (through stack.json) and the dashboard get the
// application role's (db/app-role.ts).
import fs from 'node:fs';
import path from 'node:path';
import { APP_ROLE, ensureAppRole, grantAppAccess, urlAsRole } from '../db/app-role';
import { EmbeddedAuthError } from '../db/embedded-auth';
import { ensureDatabase, startEmbeddedPostgres, type EmbeddedPg } from '../db/embedded-server';
import { applyMigrations, type MigrationResult } from '../db/migrate';
import { roleWarning } from '../db/role-check';
import { isAlive, openLogFile, stopProcess, tailFile, waitForExit } from './processes';

export interface StackDatabaseOptions {
  home: string;
  /** An external server's URL; unset starts the embedded one. */
  databaseUrl?: string;
  /** Port of the embedded server. @default 54329 */
  pgPort?: number;
  /** Database created on the embedded server. @default "flywheel" */
  databaseName?: string;
}

export interface StackDatabase {
  /**
   * The URL workers use: the application role's on the embedded server's `flywheel` database (a new password every
   * start), or DATABASE_URL as given.
   */
  url: string;
  embedded: boolean;
  /** The embedded postmaster's pid. */
  pid: number | undefined;
  migrations: MigrationResult;
  /** One line to show: an external role that is too powerful, or an embedded cluster whose fixed password was replaced. */
  warning?: string;
  stop(): Promise<void>;
}

export async function startStackDatabase(opts: StackDatabaseOptions): Promise<StackDatabase> {
  if (opts.databaseUrl) {
    const migrations = await applyMigrations(opts.databaseUrl);
    const warning = await roleWarning(opts.databaseUrl);
    return { url: opts.databaseUrl, embedded: false, pid: undefined, migrations, warning, stop: async () => undefined };
  }
  const dataDir = path.join(opts.home, 'pg');
  checkPostgresCanReach(dataDir);
  const log = openLogFile(opts.home, 'postgres');
  let open = true;
  // PostgreSQL may still print after stop() resolves: write only while the file is open.
  const write = (line: string): void => void (open && fs.writeSync(log.fd, line + '\n'));
  const closeLog = (): void => {
    if (open) fs.closeSync(log.fd);
    open = false;
  };
  // startEmbeddedPostgres removes embedded-postgres's own exit hooks: `flywheel up` stops everything itself, in order.
  const pg = await startEmbeddedPostgres({ dataDir, port: opts.pgPort, onLog: write }).catch((e: unknown) => {
    closeLog();
    if (e instanceof EmbeddedAuthError) throw e; // the server ran: what to do is in the message, not the log
    // embedded-postgres rejects with nothing when the server exits during start (a port in use, a bad data dir).
    const why = e instanceof Error ? e.message : 'it exited during start-up';
    throw new Error(
      `the embedded PostgreSQL did not start on port ${opts.pgPort ?? 54329}: ${why}; log ${log.path}:\n${tailFile(log.path, 5, true)}`,
    );
  });
  try {
    const adminDbUrl = await ensureDatabase(pg.adminUrl, opts.databaseName ?? 'flywheel');
    const migrations = await applyMigrations(adminDbUrl);
    const appPassword = await ensureAppRole(pg.adminUrl);
    await grantAppAccess(adminDbUrl);
    return {
      url: urlAsRole(adminDbUrl, APP_ROLE, appPassword),
      embedded: true,
      pid: pg.pid,
      migrations,
      warning: pg.replacedLegacyPassword
        ? `the embedded PostgreSQL's superuser had the old fixed password; it now has a random one, in ${pg.passwordFile}`
        : undefined,
      stop: async () => {
        await stopEmbedded(pg);
        closeLog();
      },
    };
  } catch (e) {
    await stopEmbedded(pg);
    closeLog();
    throw e;
  }
}

/**
 * pg.stop() sends SIGINT (a fast shutdown) but waits for an `exit` event that never comes if the postmaster
 * already died (a terminal's Ctrl-C reaches it directly), so we wait on the pid instead, then SIGKILL.
 */
async function stopEmbedded(pg: EmbeddedPg): Promise<void> {
  if (!pg.pid || !isAlive(pg.pid)) return;
  void pg.stop().catch(() => undefined);
  if (!(await waitForExit(pg.pid, 20_000))) await stopProcess(pg.pid, { signal: 'SIGKILL' });
}

/**
 * Run as root, embedded-postgres runs the server as the `postgres` user, which must be able to enter every folder
 * above the data dir; a home under a mode-700 folder (often /root) otherwise fails deep inside initdb.
 */
function checkPostgresCanReach(dataDir: string): void {
  if (process.getuid?.() !== 0) return;
  for (let dir = path.dirname(dataDir); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    let st: fs.Stats;
    try {
      st = fs.statSync(dir);
    } catch {
      continue; // created later, with a default mode
    }
    if (st.uid !== 0 || (st.mode & 0o001) !== 0) continue;
    throw new Error(
      `the embedded PostgreSQL runs as user "postgres", which cannot enter ${dir} (mode ${(st.mode & 0o777).toString(8)}): ` +
        `use a FLYWHEEL_HOME outside it, \`chmod o+x ${dir}\`, or set DATABASE_URL`,
    );
  }
}
