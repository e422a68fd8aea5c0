// The one PostgreSQL client: the `pg` driver behind drizzle, for the embedded server and any DATABASE_URL alike.
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import { Pool } from 'pg';
import * as schema from './schema';

export type Db = NodePgDatabase<typeof schema> & { $client: Pool };

export interface DbHandle {
  db: Db;
  pool: Pool;
  close(): Promise<void>;
}

/** Opens a pool on `url`. Errors from an unreachable server surface on first use, wrapped by callers. */
export function openDb(url: string, opts: { max?: number } = {}): DbHandle {
  const pool = new Pool({ connectionString: url, max: opts.max ?? 5, connectionTimeoutMillis: 10_000 });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  const db = drizzle(pool, { schema }) as Db;
  return { db, pool, close: () => pool.end() };
}

/** Removes credentials from a database URL before it is printed or logged. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
