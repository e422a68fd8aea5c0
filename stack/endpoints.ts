// Where the CLI finds Temporal and PostgreSQL: the environment first, then the stack a `flywheel up`
// is serving from FLYWHEEL_HOME. A command that finds neither says how to get one.
import fs from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import type { FlywheelConfig } from '../core/config';
import { findRunningStack } from './stack-state';
import { flywheelDataConverter } from '../temporal/data-converter';
import { NonRetryableError } from '../core/errors';

export interface Endpoints {
  temporalAddress: string;
  namespace: string;
  databaseUrl: string;
  taskQueuePrefix: string;
  uiUrl?: string;
}

export class NoStackError extends NonRetryableError {}

export function resolveEndpoints(config: FlywheelConfig): Endpoints | undefined {
  const stack = findRunningStack(config.home);
  const temporalAddress = config.temporalAddress ?? stack?.temporal.address;
  const databaseUrl = config.databaseUrl ?? stack?.postgres.url;
  if (!temporalAddress || !databaseUrl) return undefined;
  return {
    temporalAddress,
    namespace: config.temporalAddress ? config.namespace : (stack?.temporal.namespace ?? config.namespace),
    databaseUrl,
    taskQueuePrefix: stack?.taskQueuePrefix ?? config.taskQueuePrefix,
    uiUrl: stack?.temporal.uiUrl,
  };
}

export function requireEndpoints(config: FlywheelConfig): Endpoints {
  const e = resolveEndpoints(config);
  if (!e)
    throw new NoStackError(
      `no Flywheel stack found for ${config.home}: start one with \`flywheel up\` (or set TEMPORAL_ADDRESS and DATABASE_URL)`,
    );
  return e;
}

export async function connectClient(config: FlywheelConfig, e: Endpoints): Promise<{ client: Client; connection: Connection }> {
  const tls = config.tls
    ? {
        serverNameOverride: config.tls.serverName,
        serverRootCACertificate: config.tls.caPath ? fs.readFileSync(config.tls.caPath) : undefined,
        clientCertPair:
          config.tls.certPath && config.tls.keyPath
            ? { crt: fs.readFileSync(config.tls.certPath), key: fs.readFileSync(config.tls.keyPath) }
            : undefined,
      }
    : undefined;
  const connection = await Connection.connect({ address: e.temporalAddress, tls, apiKey: config.temporalApiKey });
  return {
    client: new Client({ connection, namespace: e.namespace, dataConverter: flywheelDataConverter(config.payloadKeys) }),
    connection,
  };
}

/** The database alone, for commands that need no Temporal (serve, feedback import). */
export function requireDatabaseUrl(config: FlywheelConfig): string {
  const url = config.databaseUrl ?? findRunningStack(config.home)?.postgres.url;
  if (!url) throw new NoStackError(`no database: set DATABASE_URL or start a stack with \`flywheel up\` (looked in ${config.home})`);
  return url;
}
