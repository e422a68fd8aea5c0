// What a command that talks to a running stack opens, and closes in `finally`: a Temporal client and the database.
import type { Client } from '@temporalio/client';
import { resolveConfig, type FlywheelConfig } from '../core/config';
import { openDb, type Db } from '../db/client';
import { connectClient, requireEndpoints, type Endpoints } from '../stack/endpoints';

export interface Session {
  config: FlywheelConfig;
  endpoints: Endpoints;
  client: Client;
  db: Db;
}

export async function withSession<T>(fn: (s: Session) => Promise<T>, endpoints?: Endpoints): Promise<T> {
  const config = resolveConfig(process.env, process.cwd());
  const e = endpoints ?? requireEndpoints(config);
  const { client, connection } = await connectClient(config, e);
  const dbh = openDb(e.databaseUrl, { max: 2 });
  try {
    return await fn({ config, endpoints: e, client, db: dbh.db });
  } finally {
    await connection.close();
    await dbh.close();
  }
}
