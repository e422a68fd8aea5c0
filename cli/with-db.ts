// The database alone, for a command that reads or writes PostgreSQL through services/ and needs no Temporal: opened
// for the call, closed in `finally`. A row the user named that does not exist (NotFoundError) is their input: one
// line, exit 2.
import { resolveConfig } from '../core/config';
import { NotFoundError } from '../core/errors';
import { openDb, type Db } from '../db/client';
import { requireDatabaseUrl } from '../stack/endpoints';
import { UsageError } from './errors';

export async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const dbh = openDb(requireDatabaseUrl(resolveConfig(process.env, process.cwd())), { max: 1 });
  try {
    return await fn(dbh.db);
  } catch (err) {
    if (err instanceof NotFoundError) throw new UsageError(err.message);
    throw err;
  } finally {
    await dbh.close();
  }
}
