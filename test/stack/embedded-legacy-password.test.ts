// A home made by a Flywheel before issue 32 (superuser password "flywheel", cleartext `password` rules): the first
// start moves it to a random password in a 0600 file and scram-sha-256 rules, says so once, and keeps its data;
// a password file that does not match the cluster is refused in one line that says what to do.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { embeddedPgPaths } from '../../db/embedded-server';
import { scratchDir } from '../helpers/env';
import { freePort } from '../helpers/ports';
import { startStackDatabaseProcess, type StackDatabaseProcess } from '../helpers/stack-database-process';

const RUN_TS = path.resolve(__dirname, '../../bin/run-ts.js');
const home = scratchDir('pg-legacy');
const dataDir = path.join(home, 'pg');
const { passwordFile } = embeddedPgPaths(dataDir);
let port: number;
let db: StackDatabaseProcess | undefined;
afterEach(async () => {
  await db?.stop();
  db = undefined;
});

function superuserUrl(password: string): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/flywheel`;
}

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}

beforeAll(async () => {
  port = await freePort();
  await promisify(execFile)(process.execPath, [RUN_TS, path.join(__dirname, 'legacy-embedded-cluster.ts'), dataDir]);
  expect(fs.readFileSync(path.join(dataDir, 'pg_hba.conf'), 'utf8')).toMatch(/^host\s+all\s+all\s+127\.0\.0\.1\/32\s+password$/m);
  expect(fs.existsSync(passwordFile)).toBe(false);
}, 60_000);

it('moves an old home to a random superuser password on its first start, once, keeping its data', async () => {
  db = await startStackDatabaseProcess(home, port);
  expect(db.warning).toBe(`the embedded PostgreSQL's superuser had the old fixed password; it now has a random one, in ${passwordFile}`);
  const password = fs.readFileSync(passwordFile, 'utf8').trim();
  expect(password).not.toBe('flywheel');
  await expect(query(superuserUrl('flywheel'), 'SELECT 1')).rejects.toThrow(/password authentication failed for user "postgres"/);
  const rules = await query(superuserUrl(password), 'SELECT type, auth_method FROM pg_hba_file_rules');
  expect(rules.map((r) => r.auth_method)).toEqual(['scram-sha-256', 'scram-sha-256', 'scram-sha-256']);
  await query(db.url, `INSERT INTO campaigns (id, spec, spec_hash) VALUES ('kept', '{}', 'x')`);
  await db.stop();

  db = await startStackDatabaseProcess(home, port);
  expect(db.warning).toBeUndefined();
  expect(fs.readFileSync(passwordFile, 'utf8').trim()).toBe(password);
  expect(await query(db.url, `SELECT id FROM campaigns`)).toEqual([{ id: 'kept' }]);
}, 120_000);

it('refuses, in one line, a password file that is not the cluster’s', async () => {
  fs.writeFileSync(passwordFile, 'not-the-password\n', { mode: 0o600 });
  const e = await startStackDatabaseProcess(home, port).then(
    (d) => ((db = d), undefined),
    (err: Error) => err,
  );
  expect(e?.message).toBe(
    `the embedded PostgreSQL in ${dataDir} refused the superuser password in ${passwordFile}: ` +
      `put back the file that belongs to this cluster, or move ${dataDir} aside to start a new one`,
  );
}, 60_000);
