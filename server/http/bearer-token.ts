// The bearer-token check and the bind rule shared by Flywheel's HTTP servers (`serve`, `codec-server`).
import crypto from 'node:crypto';
import type http from 'node:http';
import { UsageError } from '../../core/errors';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/**
 * A check of `Authorization: Bearer <token>`; always true when no token is set. Digests have equal length whatever
 * was sent, so timingSafeEqual leaks neither the token nor its length.
 */
export function bearerCheck(token: string | undefined): (req: http.IncomingMessage) => boolean {
  if (!token) return () => true;
  const want = sha256(token);
  return (req) => {
    const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    return !!m && crypto.timingSafeEqual(sha256(m[1]), want);
  };
}

/** Refuses a non-loopback bind without a token: anyone on the network could otherwise use `what`. */
export function checkBindHost(host: string, token: string | undefined, what: string): void {
  if (!LOOPBACK.has(host) && !token)
    throw new UsageError(`refusing to serve on ${host} without FLYWHEEL_API_TOKEN: anyone on the network could ${what}`);
}

function sha256(s: string): Buffer {
  return crypto.createHash('sha256').update(s).digest();
}
