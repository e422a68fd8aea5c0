// The whole local stack behind `flywheel up` (and `flywheel demo`): Temporal, PostgreSQL and one supervised
// worker process per queue family, started in that order and stopped in the reverse one.
import type { FlywheelConfig } from '../core/config';
import { QUEUE_FAMILIES, taskQueue, type QueueFamily } from '../contracts/queues';
import { redactUrl } from '../db/client';
import { ALL_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import type { StackEvent } from './events';
import { isAlive } from './processes';
import { startStackDatabase, type StackDatabase } from './stack-database';
import { findRunningStack, reapStaleStack, removeStackState, writeStackState, type StackState } from './stack-state';
import { startStackTemporal, type StackTemporal } from './stack-temporal';
import { ensureSearchAttributes } from './temporal-ready';
import { WorkerSupervisor } from './worker-supervisor';
import { NonRetryableError } from '../core/errors';

export class StackAlreadyRunningError extends NonRetryableError {}

export interface StartStackOptions {
  /** Receives readiness, restarts and warnings; see formatStackEvent. @default ignore */
  onEvent?: (e: StackEvent) => void;
  /** The worker families to run. @default QUEUE_FAMILIES */
  families?: readonly QueueFamily[];
  /** argv of a worker process. @default node bin/flywheel.js worker --queue <family> */
  workerCommand?: (family: QueueFamily) => string[];
}

export interface RunningStack {
  temporalAddress: string;
  namespace: string;
  /** The Temporal Web UI of the dev server; undefined for an external cluster. */
  uiUrl: string | undefined;
  databaseUrl: string;
  taskQueues: Record<QueueFamily, string>;
  /** Current state, as written to `<home>/stack.json` (worker pids change on restarts). */
  state(): StackState;
  /** Resolves with the reason if Temporal or the embedded PostgreSQL dies under the stack. */
  failed: Promise<Error>;
  /** Stops workers, then Temporal, then PostgreSQL (only what this call started); idempotent. */
  stop(): Promise<void>;
}

export async function startStack(config: FlywheelConfig, opts: StartStackOptions = {}): Promise<RunningStack> {
  const emit = opts.onEvent ?? (() => undefined);
  const running = findRunningStack(config.home);
  if (running) throw new StackAlreadyRunningError(`flywheel up is already running on ${config.home} (pid ${running.pid})`);
  for (const s of await reapStaleStack(config.home)) emit({ kind: 'warning', message: `stopped ${s} left by a killed flywheel up` });

  const families = opts.families ?? QUEUE_FAMILIES;
  const taskQueues = Object.fromEntries(QUEUE_FAMILIES.map((f) => [f, taskQueue(f, config.taskQueuePrefix)])) as Record<
    QueueFamily,
    string
  >;
  const state: StackState = {
    version: 1,
    pid: process.pid,
    startedAt: new Date().toISOString(),
    home: config.home,
    temporal: { address: '', namespace: config.namespace, external: !!config.temporalAddress },
    postgres: { url: '', external: !!config.databaseUrl },
    taskQueuePrefix: config.taskQueuePrefix,
    workers: {},
  };
  let stopping = false;
  const supervisors = families.map(
    (family) =>
      new WorkerSupervisor({
        family,
        taskQueue: taskQueues[family],
        home: config.home,
        command: opts.workerCommand?.(family),
        onEvent: (e) => {
          // Keep stack.json's worker pids current across restarts.
          if (e.kind === 'worker-ready') {
            state.workers[e.family] = { pid: e.pid, taskQueue: e.taskQueue };
            if (!stopping) writeStackState(state);
          }
          emit(e);
        },
      }),
  );

  // Stopped in reverse: the workers first (they drain against live servers), then Temporal and PostgreSQL together.
  const servers: Array<() => Promise<void>> = [];
  const warn = (e: Error): void => emit({ kind: 'warning', message: e.message });
  const safetyNet = (): void => signalAllNow(state, supervisors);
  const stopAll = async (): Promise<void> => {
    stopping = true;
    await Promise.all(supervisors.map((s) => s.stop().catch(warn)));
    removeStackState(config.home);
    await Promise.all(servers.splice(0).map((stop) => stop().catch(warn)));
    process.off('exit', safetyNet);
  };
  process.on('exit', safetyNet);
  try {
    // The workers load their code while Temporal and PostgreSQL start (together: they do not depend on each other).
    for (const s of supervisors) s.preload(workerEnv(config));
    const [t, d] = await Promise.allSettled([
      startStackTemporal(config).then((t) => {
        emit({ kind: 'temporal-ready', address: t.address, uiUrl: t.uiUrl, namespace: config.namespace, external: !t.pid, pid: t.pid });
        return t;
      }),
      startStackDatabase({ home: config.home, databaseUrl: config.databaseUrl, pgPort: config.pgPort }),
    ]);
    for (const r of [t, d]) if (r.status === 'fulfilled') servers.push(r.value.stop);
    if (t.status === 'rejected') throw t.reason;
    if (d.status === 'rejected') throw d.reason;
    const [temporal, db] = [t.value, d.value];
    state.temporal = { ...state.temporal, address: temporal.address, uiUrl: temporal.uiUrl, pid: temporal.pid };
    state.postgres = { ...state.postgres, url: db.url, pid: db.pid };
    emit({
      kind: 'postgres-ready',
      redactedUrl: redactUrl(db.url),
      external: !db.embedded,
      migrationsApplied: db.migrations.applied,
      pid: db.pid,
    });
    if (db.warning) emit({ kind: 'warning', message: db.warning });
    const names = await ensureSearchAttributes(temporal.connection, config.namespace, ALL_SEARCH_ATTRIBUTES).catch((e: Error) => {
      emit({ kind: 'warning', message: `could not check search attributes: ${e.message}` });
      return [];
    });
    if (names.length) emit({ kind: 'search-attributes-added', names });

    writeStackState(state);
    await Promise.all(supervisors.map((s) => s.start(workerEnv(config, temporal.address, db.url))));
    emit({
      kind: 'stack-up',
      uiUrl: temporal.uiUrl,
      address: temporal.address,
      namespace: config.namespace,
      taskQueues: families.map((f) => taskQueues[f]),
    });

    let stopped: Promise<void> | undefined;
    return {
      temporalAddress: temporal.address,
      namespace: config.namespace,
      uiUrl: temporal.uiUrl,
      databaseUrl: db.url,
      taskQueues,
      state: () => structuredClone(state),
      failed: watchForFailure(temporal, db, () => stopping),
      stop: () => {
        if (!stopped) emit({ kind: 'stopping' });
        stopped ??= stopAll().then(() => emit({ kind: 'stopped' }));
        return stopped;
      },
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** A worker's environment: the parent's, with the resolved addresses (once known) in the variables resolveConfig reads. */
function workerEnv(config: FlywheelConfig, temporalAddress?: string, databaseUrl?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The dev server speaks plain gRPC: TLS settings meant for an external cluster must not reach these workers.
  if (!config.temporalAddress) {
    for (const k of [
      'TEMPORAL_TLS',
      'TEMPORAL_TLS_CERT',
      'TEMPORAL_TLS_KEY',
      'TEMPORAL_TLS_CA',
      'TEMPORAL_TLS_SERVER_NAME',
      'TEMPORAL_API_KEY',
    ])
      delete env[k];
  }
  Object.assign(env, {
    FLYWHEEL_HOME: config.home,
    TEMPORAL_NAMESPACE: config.namespace,
    FLYWHEEL_TASK_QUEUE_PREFIX: config.taskQueuePrefix,
  });
  if (temporalAddress) env.TEMPORAL_ADDRESS = temporalAddress;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  return env;
}

/** Temporal's and the embedded PostgreSQL's processes are not restarted: their death (not during stop) ends the stack. */
function watchForFailure(temporal: StackTemporal, db: StackDatabase, stopping: () => boolean): Promise<Error> {
  return new Promise((resolve) => {
    void temporal.exited?.then(() => {
      if (!stopping()) resolve(new Error(`the Temporal dev server exited; see ${temporal.logFile ?? 'its log'}`));
    });
    if (db.pid) {
      const pid = db.pid;
      const timer = setInterval(() => {
        if (stopping()) clearInterval(timer);
        else if (!isAlive(pid)) {
          clearInterval(timer);
          resolve(new Error('the embedded PostgreSQL exited; see logs/postgres.log'));
        }
      }, 1_000);
      timer.unref();
    }
  });
}

/**
 * The `exit` safety net: if `flywheel up` dies without stop() (an uncaught error, process.exit elsewhere), it still
 * signals every child synchronously so none outlives it. SIGINT is PostgreSQL's fast shutdown.
 */
function signalAllNow(state: StackState, supervisors: WorkerSupervisor[]): void {
  const send = (pid: number | undefined, sig: NodeJS.Signals): void => {
    try {
      if (pid) process.kill(pid, sig);
    } catch {
      /* already gone */
    }
  };
  for (const s of supervisors) send(s.pid, 'SIGTERM');
  send(state.temporal.pid && -state.temporal.pid, 'SIGTERM');
  send(state.postgres.pid, 'SIGINT');
}
