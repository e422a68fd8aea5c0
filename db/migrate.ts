// Applies the committed drizzle migrations once, under a PostgreSQL advisory lock, so two processes
// starting together never race: the second waits, then finds nothing left to apply.
import path from 'node:path';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { Client } from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');
/** An arbitrary constant: the advisory lock key for Flywheel's migrations. */
const MIGRATION_LOCK_KEY = 0x46_6c_79_77; // "Flyw"

export interface MigrationResult {
  /** Migrations this call applied (0 when another process had already applied them). */
  applied: number;
  total: number;
}

export async function applyMigrations(url: string): Promise<MigrationResult> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const before = await countApplied(client);
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS_DIR });
      const after = await countApplied(client);
      return { applied: after - before, total: after };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

async function countApplied(client: Client): Promise<number> {
  const r = await client.query(
    `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'drizzle' AND table_name = '__drizzle_migrations'`,
  );
  if (r.rows[0].n === 0) return 0;
  const c = await client.query('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
  return c.rows[0].n as number;
}
