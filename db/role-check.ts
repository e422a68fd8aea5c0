// What the role in a DATABASE_URL may do beyond Flywheel's rows. An external database is used as given; `flywheel up`
// says once when its role could run programs or touch files on the database server (docs/operations.md, "The database").
import { Client } from 'pg';

/** The role's powers that reach outside the database, most dangerous first; empty for a role Flywheel should use. */
export async function dangerousRolePowers(url: string): Promise<{ role: string; powers: string[] }> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ role: string; superuser: boolean; program: boolean; read: boolean; write: boolean }>(
      `SELECT current_user AS role, rolsuper AS superuser,
              pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER') AS program,
              pg_has_role(current_user, 'pg_read_server_files', 'MEMBER') AS read,
              pg_has_role(current_user, 'pg_write_server_files', 'MEMBER') AS write
         FROM pg_roles WHERE rolname = current_user`,
    );
    const row = r.rows[0];
    if (!row) return { role: '?', powers: [] };
    if (row.superuser) return { role: row.role, powers: ['superuser'] };
    const powers = [
      row.program ? 'pg_execute_server_program' : '',
      row.read ? 'pg_read_server_files' : '',
      row.write ? 'pg_write_server_files' : '',
    ].filter(Boolean);
    return { role: row.role, powers };
  } finally {
    await c.end();
  }
}

/** One line for `flywheel up` when the URL's role is too powerful, else undefined. */
export async function roleWarning(url: string): Promise<string | undefined> {
  const { role, powers } = await dangerousRolePowers(url);
  if (!powers.length) return undefined;
  const what = powers[0] === 'superuser' ? 'is a superuser' : `is a member of ${powers.join(', ')}`;
  const reach =
    powers[0] === 'superuser' || powers.includes('pg_execute_server_program')
      ? 'run shell commands on the database server (COPY … TO PROGRAM)'
      : "read or write the database server's files (COPY … TO/FROM a file)";
  return `DATABASE_URL's role "${role}" ${what}: whoever gets the URL can ${reach}; give Flywheel a role of its own (docs/operations.md, "The database")`;
}
