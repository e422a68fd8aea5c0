// A throwaway stack for benchmarks: a Temporal dev server (the installed CLI), an embedded PostgreSQL and
// in-process workers for every queue family, all under one temp folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { PredictServers } from '../../activities/eval/predict-servers';
import { QUEUE_FAMILIES, taskQueue } from '../../contracts/queues';
import { APP_ROLE, ensureAppRole, grantAppAccess, urlAsRole } from '../../db/app-role';
import { openDb, type DbHandle } from '../../db/client';
import { ensureDatabase, startEmbeddedPostgres } from '../../db/embedded-server';
import { applyMigrations } from '../../db/migrate';
import { startTemporalDevServer } from '../../stack/temporal-dev-server';
import { freePort } from '../../test/helpers/ports';
import { startedList } from './run-bench';

export interface BenchStack {
  client: Client;
  /** The workers' connection, for a bench that runs a worker of its own (it shuts that worker down before stop()). */
  connection: NativeConnection;
  db: DbHandle;
  home: string;
  prefix: string;
  /**
   * Where a child `flywheel` command finds this stack (DATABASE_URL, TEMPORAL_ADDRESS): on the embedded server the
   * application role's URL, as `flywheel up` gives its workers; else the bench's database on the given server.
   */
  databaseUrl: string;
  /** The server's admin URL (the embedded superuser's, or the given server's), for a bench's own CREATE DATABASE. */
  adminUrl: string;
  temporalAddress: string;
  /** The dev server's Prometheus endpoint (`http://127.0.0.1:PORT/metrics`): its request counters. */
  temporalMetricsUrl: string;
  stop(): Promise<void>;
}

export interface BenchStackOptions {
  /** A PostgreSQL server to use (a fresh database on it) instead of an embedded one. @default an embedded server */
  databaseUrl?: string;
  /** Activities each worker runs at once (a running training attempt holds one while it follows its job). @default 32 */
  activitySlots?: number;
  /** Connections in the activities' pool. @default 20 */
  poolSize?: number;
  /** The dev server's dynamic configuration. @default DEFAULT_DYNAMIC_CONFIG */
  dynamicConfig?: Record<string, string | number>;
  /** Environment for the dev server process (GOGC, GOMAXPROCS). @default this process's */
  temporalEnv?: Record<string, string>;
  /** More options for the orchestration worker (the workflows): cache, pollers, task slots. @default the SDK's */
  orchestrationWorker?: Partial<WorkerOptions>;
}

export async function startBenchStack(port = 55490, opts: BenchStackOptions = {}): Promise<BenchStack> {
  // Once a process: a bench that starts a stack after stopping one (bench/outer-ablation.ts, a stack per task seed)
  // finds the runtime already installed, or installs it afresh once the last one's workers let it shut down.
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch (e) {
    if (!(e instanceof Error && /already been (installed|instantiated)/.test(e.message))) throw e;
  }
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'flywheel-bench-'));
  fs.chmodSync(home, 0o755);
  // What has started so far, stopped newest first: by stop(), by Ctrl-C, or here when a later step fails, so a stack
  // that cannot start leaves no Temporal dev server or PostgreSQL behind.
  const started = startedList('the bench stack');
  started.add(async () => fs.rmSync(home, { recursive: true, force: true }));
  try {
    const metricsPort = await freePort();
    const env = await startTemporalDevServer({
      home,
      port: await freePort(),
      dbFile: 'memory',
      readyTimeoutMs: 120_000,
      metricsPort,
      dynamicConfig: opts.dynamicConfig,
      env: opts.temporalEnv,
    });
    started.add(() => env.stop());
    const pg = opts.databaseUrl ? undefined : await startEmbeddedPostgres({ dataDir: path.join(home, 'pg'), port });
    if (pg) started.add(() => pg.stop());
    const dbName = opts.databaseUrl ? `flywheel_bench_${Date.now().toString(36)}` : 'bench';
    const adminUrl = opts.databaseUrl ?? pg!.adminUrl;
    const adminDbUrl = await ensureDatabase(adminUrl, dbName);
    if (!pg) started.add(() => dropDatabase(opts.databaseUrl!, dbName));
    await applyMigrations(adminDbUrl);
    let url = adminDbUrl;
    if (pg) {
      url = urlAsRole(adminDbUrl, APP_ROLE, await ensureAppRole(pg.adminUrl));
      await grantAppAccess(adminDbUrl);
    }
    const db = openDb(url, { max: opts.poolSize ?? 20 });
    started.add(() => db.close());
    const connection = await NativeConnection.connect({ address: env.address });
    started.add(() => connection.close());
    const prefix = 'bench';
    const predictServers = new PredictServers();
    started.add(async () => predictServers.close());
    const activities = createActivities({ db: db.db, home, predictServers });
    const workers = await Promise.all(
      QUEUE_FAMILIES.map((family) =>
        Worker.create({
          connection,
          taskQueue: taskQueue(family, prefix),
          activities: activities[family],
          ...(family === 'orchestration' ? { workflowsPath: require.resolve('../../workflows') } : {}),
          maxConcurrentActivityTaskExecutions: opts.activitySlots ?? 32,
          ...(family === 'orchestration' ? opts.orchestrationWorker : {}),
        }),
      ),
    );
    const runs = workers.map((w) => w.run());
    started.add(async () => {
      workers.forEach((w) => w.shutdown());
      await Promise.allSettled(runs);
    });
    return {
      client: new Client({ connection: env.connection }),
      connection,
      db,
      home,
      prefix,
      databaseUrl: url,
      adminUrl,
      temporalAddress: env.address,
      temporalMetricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
      stop: () => started.stop(),
    };
  } catch (e) {
    await started.stop();
    throw e;
  }
}

/** Drops a bench's own database on a server it does not own. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  const c = new PgClient({ connectionString: serverUrl });
  await c.connect();
  try {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await c.end();
  }
}

export function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}
