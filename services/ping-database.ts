// The health check's round trip to PostgreSQL (`/healthz`): a statement that reads nothing, so it answers for any
// role the server connects as. The query builder needs a table, so this one stays a plain `sql` statement.
import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';

/** Resolves when the database answers; rejects with the driver's error (unreachable, refused) otherwise. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.execute(sql`SELECT 1`);
}
