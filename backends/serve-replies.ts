// The warm protocols' stdout, as the worker reads it (core/job-contract.ts PredictRequest and TrainRequest: one JSON
// reply line per request, `{"id", "ok", "error"?}`): each line handed on, the one reply to the request in flight told
// apart from a stray print, and a line that never ends cut off before it grows in the worker's memory without end.
// Shared by the warm predict servers (activities/eval/predict-server.ts) and the warm trainers
// (backends/local/train-server.ts).
import readline from 'node:readline';
import type { Readable } from 'node:stream';

/** The longest stdout line a server may write (a reply is a few dozen bytes; a stray print may be long). */
export const MAX_STDOUT_LINE = 1024 * 1024;

export interface ServeReply {
  id: string;
  ok: boolean;
  error?: string;
}

/** Each line of `stdout` to `onLine`; `tooLong` once a line passes MAX_STDOUT_LINE (the server is to be killed). */
export function readServeLines(stdout: Readable, onLine: (line: string) => void, tooLong: () => void): void {
  readline.createInterface({ input: stdout }).on('line', onLine);
  let unended = 0;
  stdout.on('data', (c: Buffer) => {
    const nl = c.lastIndexOf(0x0a);
    unended = nl < 0 ? unended + c.length : c.length - nl - 1;
    if (unended > MAX_STDOUT_LINE) tooLong();
  });
}

/** The reply to request `id` if `line` is one; undefined for anything else (a stray print, another id). */
export function parseServeReply(line: string, id: string): ServeReply | undefined {
  if (!line.startsWith('{')) return undefined;
  let reply: Partial<ServeReply>;
  try {
    reply = JSON.parse(line) as Partial<ServeReply>;
  } catch {
    return undefined;
  }
  if (reply?.id !== id || typeof reply.ok !== 'boolean') return undefined;
  return { id, ok: reply.ok, ...(typeof reply.error === 'string' ? { error: reply.error } : {}) };
}
