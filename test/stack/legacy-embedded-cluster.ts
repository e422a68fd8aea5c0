// `node bin/run-ts.js test/stack/legacy-embedded-cluster.ts DATA_DIR`: initialises a cluster the way Flywheel did
// before issue 32 (db/embedded-server.ts at cc9c0eb): superuser `postgres` with the fixed password "flywheel",
// cleartext `password` rules in pg_hba.conf, no password file. A separate process: embedded-postgres is ESM-only.
const nativeImport = new Function('m', 'return import(m)') as (
  m: string,
) => Promise<{ default: new (o: Record<string, unknown>) => { initialise(): Promise<void> } }>;

async function main(): Promise<void> {
  const { default: EmbeddedPostgres } = await nativeImport('embedded-postgres');
  const pg = new EmbeddedPostgres({
    databaseDir: process.argv[2],
    user: 'postgres',
    password: 'flywheel',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
  });
  await pg.initialise();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : String(e));
    process.exit(1);
  },
);
