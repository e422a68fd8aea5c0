// Two processes applying the migrations to a fresh database at the same moment (two `flywheel up`s, or two
// workers' hosts): the advisory lock lets one apply them all and the other find nothing to do.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client as PgClient } from 'pg';
import { pgServerUrl } from '../helpers/env';
import { ensureDatabase } from '../../db/embedded-server';
import { MIGRATIONS_DIR, type MigrationResult } from '../../db/migrate';

const ROOT = path.resolve(__dirname, '../..');

function applyInChild(url: string): Promise<MigrationResult> {
  const script = `require('./db/migrate').applyMigrations(process.env.URL).then((r) => console.log(JSON.stringify(r)))`;
  return promisify(execFile)(process.execPath, ['-r', 'tsx/cjs', '-e', script], { cwd: ROOT, env: { ...process.env, URL: url } }).then(
    ({ stdout }) => JSON.parse(stdout.trim().split('\n').pop()!) as MigrationResult,
  );
}

it('applies the migrations once when two processes start together', async () => {
  const url = await ensureDatabase(pgServerUrl(), `fw_stack_mig_${crypto.randomBytes(3).toString('hex')}`);
  const journal = JSON.parse(fs.readFileSync(path.join(MIGRATIONS_DIR, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
  const count = journal.entries.length;

  const results = await Promise.all([applyInChild(url), applyInChild(url)]);
  expect(results.map((r) => r.applied).sort()).toEqual([0, count]);
  expect(results.map((r) => r.total)).toEqual([count, count]);

  const pg = new PgClient({ connectionString: url });
  await pg.connect();
  const rows = await pg.query('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
  await pg.end();
  expect(rows.rows[0].n).toBe(count);
}, 120_000);
