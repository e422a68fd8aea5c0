// Waiting for a Temporal frontend to answer and its namespace to exist, and checking Flywheel's search
// attributes are registered: the same steps for a dev server we started and for an external cluster.
import { Connection } from '@temporalio/client';
import {
  encodeSearchAttributeIndexedValueType,
  type SearchAttributeKey,
  type SearchAttributeType,
} from '@temporalio/common/lib/search-attributes';
import type { TemporalConnectionOptions } from '../temporal/temporal-connection';
import { setTimeout as sleep } from 'node:timers/promises';
import { FlywheelError } from '../core/errors';

export class TemporalNotReadyError extends FlywheelError {}

export interface AwaitTemporalOptions {
  /** Give up after this long. @default 60000 */
  timeoutMs?: number;
  /** Pause between attempts. @default 200 */
  intervalMs?: number;
  /** Returns a reason when waiting is pointless (e.g. the server process exited). @default never */
  abortReason?: () => string | undefined;
}

/** Resolves with a connected client Connection once `getSystemInfo` answers and `namespace` is described. */
export async function awaitTemporalReady(
  conn: TemporalConnectionOptions,
  namespace: string,
  opts: AwaitTemporalOptions = {},
): Promise<Connection> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let lastError = 'no answer yet';
  for (;;) {
    const aborted = opts.abortReason?.();
    if (aborted) throw new TemporalNotReadyError(aborted);
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ ...conn, connectTimeout: 2_000 });
      await connection.workflowService.getSystemInfo({});
      // The dev server creates its namespaces a moment after the frontend answers, so NOT_FOUND is retried too.
      await connection.workflowService.describeNamespace({ namespace });
      return connection;
    } catch (e) {
      lastError = (e as Error).message;
      await connection?.close().catch(() => undefined);
    }
    if (Date.now() > deadline) {
      throw new TemporalNotReadyError(`Temporal at ${conn.address} (namespace ${namespace}) is not ready: ${lastError}`);
    }
    await sleep(opts.intervalMs ?? 200);
  }
}

/**
 * Registers any of `keys` the namespace lacks and returns their names. The dev server already registers them
 * from `--search-attribute` (also on a restart over an existing SQLite file, where that is a no-op), so this
 * mostly matters for an external cluster; "already exists" from a concurrent registration counts as done.
 */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  keys: readonly SearchAttributeKey<SearchAttributeType>[],
): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = keys.filter((k) => !(k.name in (customAttributes ?? {})));
  if (!missing.length) return [];
  const searchAttributes = Object.fromEntries(missing.map((k) => [k.name, encodeSearchAttributeIndexedValueType(k.type)!]));
  try {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes });
  } catch (e) {
    if (!/already exists/i.test((e as Error).message)) throw e;
  }
  return missing.map((k) => k.name);
}
