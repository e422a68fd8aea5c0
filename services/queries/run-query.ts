// One way for the dashboard's queries to reach PostgreSQL: plain SQL with numbered parameters on the pool, so
// every aggregate runs in the database and only a page of rows comes back.
import type { Db } from '../../db/client';

export async function rows<R>(db: Db, text: string, params: unknown[] = []): Promise<R[]> {
  return (await db.$client.query(text, params)).rows as R[];
}

export async function one<R>(db: Db, text: string, params: unknown[] = []): Promise<R | undefined> {
  return (await rows<R>(db, text, params))[0];
}
