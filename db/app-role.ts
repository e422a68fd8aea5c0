// The application role of the embedded PostgreSQL: what the workers, the CLI and the servers log in as. It may read
// and write the rows of the `flywheel` tables and nothing more: no superuser, no CREATE DATABASE or ROLE, no member
// of any role (pg_execute_server_program and the server-file roles included), owner of nothing. Migrations, CREATE
// DATABASE and these grants run as the superuser, in the process that started the server.
import { Client } from 'pg';
import { randomPassword, scramSha256Verifier } from './scram-verifier';

export const APP_ROLE = 'flywheel_app';

const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * Creates the role if it is missing, strips it of every attribute and membership beyond LOGIN, and gives it a new
 * random password, which it returns (a restart of the stack invalidates the URL a previous one handed out).
 */
export async function ensureAppRole(adminUrl: string, role = APP_ROLE): Promise<string> {
  const password = randomPassword();
  const r = quoteIdent(role);
  const c = new Client({ connectionString: adminUrl });
  await c.connect();
  try {
    // Created unable to log in; LOGIN comes with its password in the ALTER below.
    await c.query(`DO $$ BEGIN CREATE ROLE ${r} NOLOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    await c.query(`ALTER ROLE ${r} NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT CONNECTION LIMIT -1`);
    await c.query(`ALTER ROLE ${r} RESET ALL`);
    const grants = await c.query<{ granted: string; grantor: string }>(
      `SELECT g.rolname AS granted, gr.rolname AS grantor FROM pg_auth_members m
         JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles u ON u.oid = m.member JOIN pg_roles gr ON gr.oid = m.grantor
        WHERE u.rolname = $1`,
      [role],
    );
    for (const g of grants.rows) await c.query(`REVOKE ${quoteIdent(g.granted)} FROM ${r} GRANTED BY ${quoteIdent(g.grantor)}`);
    await c.query(`ALTER ROLE ${r} LOGIN PASSWORD '${scramSha256Verifier(password)}'`);
  } finally {
    await c.end();
  }
  return password;
}

/**
 * Grants `role` what Flywheel needs in the database at `adminDbUrl` (after its migrations, as the superuser that ran
 * them): rows of every table (SELECT, INSERT, UPDATE, DELETE; not TRUNCATE, which nothing uses), the identity
 * sequences, and temporary tables (dataset registration's COPY stages through one). Default privileges cover tables
 * a later migration adds; the grants run again after every migration anyway. No CREATE on the schema: the role owns
 * nothing, so it can alter or drop nothing.
 */
export async function grantAppAccess(adminDbUrl: string, role = APP_ROLE): Promise<void> {
  const r = quoteIdent(role);
  const c = new Client({ connectionString: adminDbUrl });
  await c.connect();
  try {
    const db = (await c.query<{ d: string }>('SELECT current_database() AS d')).rows[0].d;
    await c.query(
      [
        `GRANT CONNECT, TEMPORARY ON DATABASE ${quoteIdent(db)} TO ${r}`,
        `REVOKE CREATE ON SCHEMA public FROM PUBLIC`,
        `GRANT USAGE ON SCHEMA public TO ${r}`,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${r}`,
        `GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${r}`,
        `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${r}`,
        `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ${r}`,
      ].join(';\n'),
    );
  } finally {
    await c.end();
  }
}

/** `url` (any database on the server) as `role` with `password`. */
export function urlAsRole(url: string, role: string, password: string): string {
  const u = new URL(url);
  u.username = encodeURIComponent(role);
  u.password = encodeURIComponent(password);
  return u.toString();
}
