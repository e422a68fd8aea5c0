// Starting the dashboard from a command (`flywheel up`, `flywheel serve`): connect to Temporal when the endpoints
// are known (actions and live state), or serve the database alone with a warning when it cannot be reached.
import type { Connection } from '@temporalio/client';
import type { FlywheelConfig } from '../core/config';
import type { Db } from '../db/client';
import { connectClient, type Endpoints } from '../stack/endpoints';
import { integerOption } from './integer-option';
import { startDashboard, type DashboardServer } from '../server/dashboard/server';

export interface ServeDashboardOptions {
  config: FlywheelConfig;
  db: Db;
  endpoints?: Endpoints;
  port: number;
  host: string;
  token?: string;
  /** Where warnings go. @default console.error */
  warn?: (line: string) => void;
}

/** The dashboard's port: FLYWHEEL_DASHBOARD_PORT, else 8788 (the feedback API's 8787 plus one). */
export function dashboardPort(value = process.env.FLYWHEEL_DASHBOARD_PORT ?? '8788', what = 'FLYWHEEL_DASHBOARD_PORT'): number {
  return integerOption(what, 0, 65535)(value);
}

export async function serveDashboard(o: ServeDashboardOptions): Promise<DashboardServer> {
  const warn = o.warn ?? ((l: string) => console.error(l));
  let connection: Connection | undefined;
  let temporal;
  if (o.endpoints) {
    try {
      const c = await connectClient(o.config, o.endpoints);
      connection = c.connection;
      temporal = { client: c.client, endpoints: o.endpoints };
    } catch (e) {
      warn(`warning: dashboard without Temporal (${(e as Error).message}): pages only, no actions`);
    }
  } else
    warn(
      'warning: no Temporal endpoint (TEMPORAL_ADDRESS or a `flywheel up` stack): the dashboard shows the database only, without actions',
    );
  try {
    const server = await startDashboard({ db: o.db, temporal, port: o.port, host: o.host, token: o.token });
    return { url: server.url, close: async () => (await server.close(), await connection?.close()) };
  } catch (e) {
    await connection?.close();
    throw e;
  }
}
