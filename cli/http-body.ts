// Reading a request body with a size cap, and draining one that will not be read, for Flywheel's HTTP servers
// (feedback API, codec endpoint, dashboard).
import type http from 'node:http';

/** The client went away before its body arrived. */
export class RequestAbortedError extends Error {
  override readonly name = 'RequestAbortedError';
  constructor() {
    super('request aborted by the client');
  }
}

/**
 * The body as text, or undefined past `max` bytes; rejects with RequestAbortedError when the client goes away. An
 * oversized body is still read (and dropped) up to 4x the cap, because a client still sending when the socket
 * closes sees a reset instead of the 413.
 */
export function readBody(req: http.IncomingMessage, max: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= max) chunks.push(c);
      else if (size > 4 * max) req.destroy();
    });
    req.on('end', () => resolve(size > max ? undefined : Buffer.concat(chunks).toString('utf8')));
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
