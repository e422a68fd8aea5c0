// The stack's Temporal: TEMPORAL_ADDRESS when given (namespace, TLS and API key from the config), else the dev
// server with its SQLite file under FLYWHEEL_HOME. Either way it is ready when this resolves.
import type { Connection } from '@temporalio/client';
import type { FlywheelConfig } from '../core/config';
import { temporalConnectionOptions } from '../temporal/temporal-connection';
import { awaitTemporalReady } from './temporal-ready';
import { startTemporalDevServer } from './temporal-dev-server';

export interface StackTemporal {
  address: string;
  /** The dev server's Web UI; undefined for an external cluster. */
  uiUrl: string | undefined;
  /** The dev server's pid; undefined for an external cluster. */
  pid: number | undefined;
  /** A client connection, already checked (closed by stop()). */
  connection: Connection;
  /** Resolves if the dev server process exits. */
  exited: Promise<void> | undefined;
  logFile: string | undefined;
  /** Stops the dev server (if we started one) and closes the connection. */
  stop(): Promise<void>;
}

export async function startStackTemporal(config: FlywheelConfig): Promise<StackTemporal> {
  if (config.temporalAddress) {
    const connection = await awaitTemporalReady(temporalConnectionOptions(config), config.namespace);
    const external = { uiUrl: undefined, pid: undefined, exited: undefined, logFile: undefined };
    return { address: config.temporalAddress, connection, ...external, stop: () => connection.close() };
  }
  const s = await startTemporalDevServer({
    home: config.home,
    port: config.temporalPort,
    uiPort: config.temporalUiPort,
    namespace: config.namespace,
  });
  return { address: s.address, uiUrl: s.uiUrl, pid: s.pid, connection: s.connection, exited: s.exited, logFile: s.logFile, stop: s.stop };
}
