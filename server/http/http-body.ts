// Reading a request body with a size cap, and draining one that will not be read, for Flywheel's HTTP servers
// (feedback API, codec endpoint, dashboard).
import type http from 'node:http';
import { FlywheelError, NonRetryableError } from '../../core/errors';
import { firstBadUtf8Byte } from '../../core/utf8-bytes';

/** The client went away before its body arrived. */
export class RequestAbortedError extends FlywheelError {
  constructor() {
    super('request aborted by the client');
  }
}

/** A body that is not valid UTF-8, read with `strictUtf8` (it would otherwise be stored with U+FFFD in its place). */
export class InvalidUtf8BodyError extends NonRetryableError {}

/**
 * The body as text, or undefined past `max` bytes; rejects with RequestAbortedError when the client goes away. An
 * oversized body is still read (and dropped) up to 4x the cap, because a client still sending when the socket
 * closes sees a reset instead of the 413. With `strictUtf8`, a body that is not UTF-8 rejects with
 * InvalidUtf8BodyError naming the first bad byte, instead of decoding to U+FFFD.
 */
export function readBody(req: http.IncomingMessage, max: number, opts: { strictUtf8?: boolean } = {}): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= max) chunks.push(c);
      else if (size > 4 * max) req.destroy();
    });
    req.on('end', () => {
      if (size > max) return resolve(undefined);
      const bytes = Buffer.concat(chunks);
      if (!opts.strictUtf8) return resolve(bytes.toString('utf8'));
      try {
        resolve(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
      } catch {
        reject(new InvalidUtf8BodyError(`request body is not valid UTF-8 (first bad byte at offset ${firstBadUtf8Byte(bytes)})`));
      }
    });
    req.on('close', () => (size > max ? resolve(undefined) : reject(new RequestAbortedError())));
    req.on('error', () => reject(new RequestAbortedError()));
  });
}

/** The largest unread body drained (and dropped) before answering; past it the connection is closed. */
const DRAIN_MAX = 1 << 20;

/** Resolves with `reply` once the request body (if any) is consumed, so keep-alive connections stay usable. */
export function drained<R>(req: http.IncomingMessage, reply: R, max = DRAIN_MAX): Promise<R> {
  return new Promise((resolve) => {
    if (req.complete) return resolve(reply);
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) req.destroy();
    });
    req.on('end', () => resolve(reply));
    req.on('close', () => resolve(reply));
    req.on('error', () => resolve(reply));
  });
}
