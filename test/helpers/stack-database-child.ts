// `node bin/run-ts.js test/helpers/stack-database-child.ts HOME PORT`: startStackDatabase on HOME's embedded server.
// Prints {"url","warning","pid"} once ready; SIGTERM stops the server and exits 0; a failed start prints its message
// on stderr and exits 1.
import { startStackDatabase } from '../../stack/stack-database';

async function main(): Promise<void> {
  const [home, port] = process.argv.slice(2);
  const db = await startStackDatabase({ home, pgPort: Number(port) });
  console.log(JSON.stringify({ url: db.url, warning: db.warning, pid: db.pid }));
  process.once('SIGTERM', () => void db.stop().finally(() => process.exit(0)));
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exit(1);
});
