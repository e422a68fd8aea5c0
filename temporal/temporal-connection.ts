// How every Flywheel process reaches Temporal: address, TLS and API key from core/config.ts, in the one shape
// that both @temporalio/client's Connection and the worker's NativeConnection accept.
import fs from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import type { FlywheelConfig } from '../core/config';
import { UsageError } from '../core/errors';

export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
}

/** Thrown when no Temporal address is known (neither TEMPORAL_ADDRESS nor a running `flywheel up`). */
export class TemporalAddressMissingError extends UsageError {}

/** Connection options for `config`; certificate files are read here so a bad path fails before connecting. */
export function temporalConnectionOptions(config: FlywheelConfig): TemporalConnectionOptions {
  if (!config.temporalAddress) {
    throw new TemporalAddressMissingError('TEMPORAL_ADDRESS is not set and no `flywheel up` stack is running under ' + config.home);
  }
  return { address: config.temporalAddress, tls: tlsOptions(config.tls), apiKey: config.temporalApiKey };
}

function tlsOptions(tls: FlywheelConfig['tls']): TLSConfig | boolean | undefined {
  if (!tls) return undefined;
  const out: TLSConfig = {};
  if (tls.certPath || tls.keyPath) {
    if (!tls.certPath || !tls.keyPath) throw new Error('mTLS needs both TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY');
    out.clientCertPair = { crt: readFile(tls.certPath, 'TEMPORAL_TLS_CERT'), key: readFile(tls.keyPath, 'TEMPORAL_TLS_KEY') };
  }
  if (tls.caPath) out.serverRootCACertificate = readFile(tls.caPath, 'TEMPORAL_TLS_CA');
  if (tls.serverName) out.serverNameOverride = tls.serverName;
  return Object.keys(out).length ? out : true;
}

function readFile(p: string, variable: string): Buffer {
  try {
    return fs.readFileSync(p);
  } catch (e) {
    throw new Error(`${variable}=${p} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
}
