// A secret kept in a file of its own, mode 0600, made once: the embedded PostgreSQL's superuser password lives in one.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { NonRetryableError } from '../core/errors';

export class SecretFileError extends NonRetryableError {}

/**
 * The secret in `file`, or a new one from `make` written there first. The file appears whole or not at all: the
 * secret is written to a private temporary file (mode 0600, O_EXCL), which is then hard-linked to `file`; a link
 * never replaces an existing file, so two processes starting together end up with the same secret.
 */
export function readOrCreateSecretFile(file: string, make: () => string): { secret: string; created: boolean } {
  const existing = readSecretFile(file);
  if (existing !== undefined) return { secret: existing, created: false };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const secret = make();
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(tmp, secret + '\n', { mode: 0o600, flag: 'wx' });
    fs.linkSync(tmp, file);
    return { secret, created: true };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return { secret: readSecretFile(file)!, created: false };
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** The secret in `file` (its first line), or undefined if there is no file. Refuses a link; tightens a loose mode. */
export function readSecretFile(file: string): string | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new SecretFileError(`${file} is a symbolic link; a secret file must be a regular file`);
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new SecretFileError(`${file} is not a regular file`);
    if ((st.mode & 0o077) !== 0) fs.fchmodSync(fd, 0o600);
    const secret = fs.readFileSync(fd, 'utf8').split('\n')[0].trim();
    if (!secret) throw new SecretFileError(`${file} is empty`);
    return secret;
  } finally {
    fs.closeSync(fd);
  }
}
