// `flywheel up` with DATABASE_URL and TEMPORAL_ADDRESS set: it starts no server, migrates the given database,
// runs the workers against both, and on Ctrl-C stops only its workers (the servers keep serving).
import crypto from 'node:crypto';
import { Connection } from '@temporalio/client';
import { Client as PgClient } from 'pg';
import { pgServerUrl, scratchDir, temporalAddress } from '../helpers/env';
import { ensureDatabase } from '../../db/embedded-server';
import { livePids, spawnUp, stackEnv, type UpProcess } from './up-process';

let up: UpProcess | undefined;
afterAll(() => up?.killAll());

it('uses an external PostgreSQL and Temporal', async () => {
  const home = scratchDir('stack-external');
  const databaseUrl = await ensureDatabase(pgServerUrl(), `fw_stack_ext_${crypto.randomBytes(3).toString('hex')}`);
  const prefix = `ext-${crypto.randomBytes(3).toString('hex')}`;
  up = spawnUp(
    home,
    await stackEnv(home, { DATABASE_URL: databaseUrl, TEMPORAL_ADDRESS: temporalAddress(), FLYWHEEL_TASK_QUEUE_PREFIX: prefix }),
  );
  await up.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
  const out = up.lines.join('\n');
  expect(out).toContain(`✓ temporal  ${temporalAddress()} (namespace default, external)`);
  expect(out).toMatch(/✓ postgres  postgres:\/\/.*\/fw_stack_ext_\w+ \(external, [1-9]\d* migration\(s\) applied\)/);
  expect(out).toContain(`✓ worker training  queue ${prefix}-training`);
  // The test server's role is a superuser (CI's, or the embedded server's admin): `up` says so, once.
  expect(up.lines.filter((l) => l.startsWith(`! DATABASE_URL's role "postgres" is a superuser: `))).toHaveLength(1);
  expect(out).toContain('(external cluster: use its UI)');
  // The dashboard comes up on the same stack: its front page answers from the migrated database.
  const dash = up.lines[await up.waitFor(/^dashboard +http:\/\/127\.0\.0\.1:\d+$/)].split(/ +/)[1];
  const front = await fetch(dash);
  expect(front.status).toBe(200);
  expect(await front.text()).toContain('No campaigns yet');
  const state = up.state()!;
  expect(state.temporal.pid).toBeUndefined();
  expect(state.postgres.pid).toBeUndefined();

  const workers = Object.values(state.workers).map((w) => w!.pid);
  up.child.kill('SIGINT');
  expect(await up.exited).toEqual({ code: 0, signal: null });
  expect(livePids(workers)).toEqual([]);

  // The servers it did not start are still there, and the schema it applied stays.
  const connection = await Connection.connect({ address: temporalAddress() });
  await connection.workflowService.getSystemInfo({});
  await connection.close();
  const pg = new PgClient({ connectionString: databaseUrl });
  await pg.connect();
  const n = await pg.query('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
  await pg.end();
  expect(n.rows[0].n).toBeGreaterThan(0);
}, 240_000);
