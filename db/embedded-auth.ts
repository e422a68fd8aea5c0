// How the embedded PostgreSQL lets anyone in: a password for every connection (scram-sha-256, over the socket and
// TCP on loopback alike), a superuser whose password is random per data dir and kept in a 0600 file, and the
// one-time move of a cluster made by an older Flywheel, whose superuser password was the fixed "flywheel".
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { scramSha256Verifier } from './scram-verifier';
import { giveToServer, type ServerOsUser } from './server-os-user';
import { NonRetryableError } from '../core/errors';

export const SUPERUSER = 'postgres';
/** The superuser password every cluster made before issue 32 was given; accepted only to replace it. */
const LEGACY_PASSWORD = 'flywheel';

export class EmbeddedAuthError extends NonRetryableError {}

/** The only rules in pg_hba.conf: a password, checked by SCRAM, for every connection the server accepts. */
export const PG_HBA = [
  '# Written by Flywheel (db/embedded-auth.ts) at every start: edits here are replaced.',
  '# Every connection needs a password, checked by scram-sha-256: over the socket (in a 0700 folder) and over TCP',
  '# on loopback. No trust, no cleartext password, no replication.',
  'local   all   all                  scram-sha-256',
  'host    all   all   127.0.0.1/32   scram-sha-256',
  'host    all   all   ::1/128        scram-sha-256',
  '',
].join('\n');

/**
 * Replaces pg_hba.conf with PG_HBA unless it already is that. Read at the server's start; a cluster made by an older
 * Flywheel had `password` (cleartext) rules. The new file keeps the old one's owner, so the server can read it.
 */
export function writePgHba(dataDir: string, user: ServerOsUser): void {
  const file = path.join(dataDir, 'pg_hba.conf');
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === PG_HBA) return;
  const tmp = `${file}.flywheel.tmp`;
  fs.writeFileSync(tmp, PG_HBA, { mode: 0o600 });
  giveToServer(tmp, user);
  fs.renameSync(tmp, file);
}

/**
 * Runs initdb (`initialise`) with the superuser password in a file only it reads: initdb runs as the server's user,
 * so the file is a 0600 copy owned by that user inside the server's private socket folder, removed right after.
 */
export async function withInitdbPasswordFile<T>(
  file: string,
  password: string,
  user: ServerOsUser,
  initialise: () => Promise<T>,
): Promise<T> {
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, password + '\n', { mode: 0o600, flag: 'wx' });
  try {
    giveToServer(file, user);
    return await initialise();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/**
 * Logs in as the superuser with `password`. A cluster still on the legacy password (made by an older Flywheel, or a
 * start that stopped between writing the password file and this call) is moved to `password` here, once. Anything
 * else is refused in one line that says what to do.
 */
export async function ensureSuperuserPassword(
  adminUrl: string,
  password: string,
  where: { dataDir: string; passwordFile: string },
): Promise<{ replacedLegacy: boolean }> {
  const tryLogin = async (pw: string): Promise<Client | undefined> => {
    const u = new URL(adminUrl);
    u.password = encodeURIComponent(pw);
    const c = new Client({ connectionString: u.toString() });
    try {
      await c.connect();
      return c;
    } catch (e) {
      await c.end().catch(() => undefined);
      if ((e as { code?: string }).code === '28P01') return undefined; // invalid_password
      throw e;
    }
  };
  const current = await tryLogin(password);
  if (current) {
    await current.end();
    return { replacedLegacy: false };
  }
  const legacy = await tryLogin(LEGACY_PASSWORD);
  if (!legacy) {
    throw new EmbeddedAuthError(
      `the embedded PostgreSQL in ${where.dataDir} refused the superuser password in ${where.passwordFile}: ` +
        `put back the file that belongs to this cluster, or move ${where.dataDir} aside to start a new one`,
    );
  }
  try {
    await legacy.query(`ALTER ROLE ${SUPERUSER} PASSWORD '${scramSha256Verifier(password)}'`);
  } finally {
    await legacy.end();
  }
  return { replacedLegacy: true };
}
