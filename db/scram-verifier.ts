// A password as PostgreSQL stores it under scram-sha-256, computed here: ALTER ROLE … PASSWORD is sent the verifier,
// so the plaintext never reaches the server, its log (a failed statement is logged with its text) or pg_stat_activity.
import crypto from 'node:crypto';

/** PostgreSQL's own default (scram_iterations). */
const ITERATIONS = 4096;

/**
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (RFC 5802, RFC 7677). The password must be ASCII
 * without control characters, where SASLprep changes nothing; Flywheel's generated passwords are base64url.
 */
export function scramSha256Verifier(password: string): string {
  if (!/^[\x21-\x7e]+$/.test(password)) throw new Error('scramSha256Verifier: the password must be printable ASCII');
  const salt = crypto.randomBytes(16);
  const salted = crypto.pbkdf2Sync(password, salt, ITERATIONS, 32, 'sha256');
  const hmac = (key: Buffer, text: string): Buffer => crypto.createHmac('sha256', key).update(text).digest();
  const storedKey = crypto.createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${ITERATIONS}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** A new random password: 192 bits, URL-safe, so it goes into a connection URL as it is. */
export function randomPassword(): string {
  return crypto.randomBytes(24).toString('base64url');
}
