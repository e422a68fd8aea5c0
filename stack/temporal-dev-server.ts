// The embedded Temporal of the default stack: `temporal server start-dev` as a child process, state in a
// SQLite file under FLYWHEEL_HOME so workflows survive a restart of `flywheel up`.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import type { SearchAttributeKey, SearchAttributeType } from '@temporalio/common/lib/search-attributes';
import { findTemporalCli } from './temporal-cli';
import { ALL_SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { openLogFile, stopProcess, tailFile } from './processes';
import { awaitTemporalReady } from './temporal-ready';

/**
 * WAL instead of SQLite's default rollback journal, and `synchronous=normal` instead of `full`: a commit appends
 * to the WAL without an fsync of its own (the WAL is synced at checkpoints). A process crash loses nothing; a
 * power loss can lose the last commits but never corrupts the file. bench/stack-startup.ts measured
 * 53-60 workflow starts/s with these against 20-23/s with SQLite's defaults (2.3-3x), and no difference in
 * start-up time; every workflow task and activity result is such a commit, so the loops get the same gain.
 */
export const DEFAULT_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'];

/**
 * The server's dynamic configuration. Every activity task, workflow task and child start leaves the history service
 * as a transfer task, read by each shard's transfer-queue reader, which polls at most
 * `history.transferProcessorMaxPollRPS` times a second (default 20): a task written within 50 ms of the reader's last
 * poll waits for the next one. An experiment's steps come back to back, so each waited 40-45 ms
 * (bench/dispatch-latency.ts: activity dispatch 42 ms median with the default, 2 ms with 1000). The limit bounds the
 * reader's polls of its queue, only when there are tasks to read; a dev server's one shard and SQLite file have room
 * for them.
 */
export const DEFAULT_DYNAMIC_CONFIG: Record<string, string | number> = { 'history.transferProcessorMaxPollRPS': 1000 };

export interface TemporalDevServerOptions {
  /** FLYWHEEL_HOME: the SQLite file and the server log live under it. */
  home: string;
  /** Frontend gRPC port. */
  port: number;
  /** Web UI port; without one the server runs headless (no UI). */
  uiPort?: number;
  /** Created at launch when not "default" (which always exists). @default "default" */
  namespace?: string;
  /** @default "127.0.0.1" */
  ip?: string;
  /** The `temporal` binary. @default findTemporalCli({ home, install: true }) */
  cliPath?: string;
  /** The SQLite file, or "memory" for a server whose state ends with it (tests, benchmarks). @default "<home>/temporal.sqlite" */
  dbFile?: string | 'memory';
  /** `--sqlite-pragma` values; [] for SQLite's defaults. @default DEFAULT_SQLITE_PRAGMAS */
  sqlitePragmas?: string[];
  /** `--dynamic-config-value` settings; {} for the server's defaults. @default DEFAULT_DYNAMIC_CONFIG */
  dynamicConfig?: Record<string, string | number>;
  /** The Prometheus `/metrics` port (a bench reads the server's request counters there). @default a random free port */
  metricsPort?: number;
  /** Environment variables for the server process on top of this process's (a bench's A/B of GOGC, GOMAXPROCS). @default none */
  env?: Record<string, string>;
  /** @default ALL_SEARCH_ATTRIBUTES */
  searchAttributes?: readonly SearchAttributeKey<SearchAttributeType>[];
  /** @default 60000 */
  readyTimeoutMs?: number;
}

export interface TemporalDevServer {
  address: string;
  /** Undefined for a headless server. */
  uiUrl: string | undefined;
  namespace: string;
  pid: number;
  /** "memory" when the state is not kept. */
  dbFile: string;
  logFile: string;
  /** A client connection opened while waiting for readiness; closed by stop(). */
  connection: Connection;
  /** Resolves when the server process exits, for whatever reason. */
  exited: Promise<void>;
  stop(): Promise<void>;
}

/** `KEYWORD_LIST` → `KeywordList`: the CLI's spelling of a search-attribute type. */
function cliTypeName(type: SearchAttributeType): string {
  return type.toLowerCase().replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());
}

export function devServerArgs(opts: TemporalDevServerOptions): string[] {
  const ns = opts.namespace ?? 'default';
  const dbFile = dbFileOf(opts);
  const args = ['server', 'start-dev'];
  if (dbFile !== 'memory') args.push('--db-filename', dbFile);
  args.push('--ip', opts.ip ?? '127.0.0.1', '--port', String(opts.port));
  if (opts.uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(opts.uiPort));
  args.push('--log-level', 'warn');
  if (opts.metricsPort !== undefined) args.push('--metrics-port', String(opts.metricsPort));
  for (const [k, v] of Object.entries(opts.dynamicConfig ?? DEFAULT_DYNAMIC_CONFIG))
    args.push('--dynamic-config-value', `${k}=${JSON.stringify(v)}`);
  if (ns !== 'default') args.push('--namespace', ns);
  for (const k of opts.searchAttributes ?? ALL_SEARCH_ATTRIBUTES) args.push('--search-attribute', `${k.name}=${cliTypeName(k.type)}`);
  // The pragmas tune the file's journal; an in-memory database has none.
  if (dbFile !== 'memory') for (const p of opts.sqlitePragmas ?? DEFAULT_SQLITE_PRAGMAS) args.push('--sqlite-pragma', p);
  return args;
}

function dbFileOf(opts: TemporalDevServerOptions): string {
  return opts.dbFile ?? path.join(opts.home, 'temporal.sqlite');
}

/** Starts the dev server and resolves once its frontend answers and the namespace exists. */
export async function startTemporalDevServer(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  fs.mkdirSync(opts.home, { recursive: true });
  const cli = opts.cliPath ?? findTemporalCli({ home: opts.home, install: true });
  const ip = opts.ip ?? '127.0.0.1';
  const namespace = opts.namespace ?? 'default';
  const log = openLogFile(opts.home, 'temporal');
  // Its own process group: a terminal's Ctrl-C reaches `flywheel up` only, which stops the server after the workers.
  const child: ChildProcess = spawn(cli, devServerArgs(opts), {
    stdio: ['ignore', log.fd, log.fd],
    detached: true,
    env: { ...process.env, ...opts.env },
  });
  fs.closeSync(log.fd);
  let exitReason: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitReason = `the Temporal dev server exited (${signal ?? `code ${code}`}); log ${log.path}:\n${tailFile(log.path, 5, true)}`;
      resolve();
    });
    child.once('error', (e) => {
      exitReason = `the Temporal dev server could not start: ${e.message}`;
      resolve();
    });
  });
  const pid = child.pid ?? -1;
  const stop = (): Promise<void> => (pid > 0 ? stopProcess(pid, { group: true, graceMs: 10_000 }) : Promise.resolve());
  const address = `${ip}:${opts.port}`;
  try {
    const connection = await awaitTemporalReady({ address }, namespace, {
      timeoutMs: opts.readyTimeoutMs,
      abortReason: () => exitReason,
    });
    return {
      address,
      uiUrl: opts.uiPort === undefined ? undefined : `http://${ip}:${opts.uiPort}`,
      namespace,
      pid,
      dbFile: dbFileOf(opts),
      logFile: log.path,
      connection,
      exited,
      stop: async () => {
        await connection.close().catch(() => undefined);
        await stop();
      },
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
