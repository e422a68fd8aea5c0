// Per-test-file resources on the run's shared servers: a fresh database, a Temporal client, a scratch folder.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { grantAppAccess } from '../../db/app-role';
import { openDb, type DbHandle } from '../../db/client';
import { ensureDatabase } from '../../db/embedded-server';
import { applyMigrations } from '../../db/migrate';

/** The server's admin URL (the `postgres` database): CREATE DATABASE, migrations, roles. */
export function pgServerUrl(): string {
  const url = process.env.FLYWHEEL_TEST_PG_URL;
  if (!url) throw new Error('FLYWHEEL_TEST_PG_URL is not set: run the tests through jest (global set-up)');
  return url;
}

export function temporalAddress(): string {
  const a = process.env.FLYWHEEL_TEST_TEMPORAL_ADDRESS;
  if (!a) throw new Error('FLYWHEEL_TEST_TEMPORAL_ADDRESS is not set: run the tests through jest (global set-up)');
  return a;
}

export function workflowBundlePath(): string {
  return process.env.FLYWHEEL_TEST_WORKFLOW_BUNDLE!;
}

/**
 * A new, migrated database on the test server, unique to the caller. On the embedded server `url` and `handle` are
 * the application role's, as `flywheel up` hands its workers (so a test needing more than that role may do fails
 * here first); with DATABASE_URL they are that URL's role. `adminUrl` is the superuser's.
 */
export async function freshDatabase(label: string): Promise<{ url: string; adminUrl: string; handle: DbHandle }> {
  const name = `fw_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${crypto.randomBytes(3).toString('hex')}`;
  const adminUrl = await ensureDatabase(pgServerUrl(), name);
  await applyMigrations(adminUrl);
  const app = process.env.FLYWHEEL_TEST_PG_APP_URL;
  if (!app) return { url: adminUrl, adminUrl, handle: openDb(adminUrl) };
  await grantAppAccess(adminUrl, decodeURIComponent(new URL(app).username));
  const u = new URL(app);
  u.pathname = `/${name}`;
  const url = u.toString();
  return { url, adminUrl, handle: openDb(url) };
}

export async function temporalClient(): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect({ address: temporalAddress() });
  return { client: new Client({ connection }), connection };
}

/** A scratch folder under the run's temp dir. */
export function scratchDir(label: string): string {
  const dir = path.join(process.env.FLYWHEEL_TEST_SCRATCH ?? '/tmp', `${label}-${crypto.randomBytes(3).toString('hex')}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
