// Drives a trainer's `predict --serve` directly, as the eval worker's servers do (core/job-contract.ts
// PredictRequest): each request sent after the last one's reply, then stdin closed. For the trainers' own tests of the
// warm protocol, outside any pool or sandbox.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { PredictReply, PredictRequest } from '../../core/job-contract';

export interface Served {
  replies: PredictReply[];
  /** Other lines the process wrote on stdout. */
  stray: string[];
  /** Its exit code once stdin closed. */
  code: number | null;
  stderr: string;
}

export async function serveRequests(argv: string[], env: NodeJS.ProcessEnv, requests: Omit<PredictRequest, 'id'>[]): Promise<Served> {
  const child = spawn(argv[0], [...argv.slice(1), 'predict', '--serve'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const replies: PredictReply[] = [];
  const stray: string[] = [];
  for (const [k, r] of requests.entries()) {
    const id = `q${k + 1}`;
    child.stdin.write(JSON.stringify({ id, ...r }) + '\n');
    for (;;) {
      const next = await lines.next();
      if (next.done) throw new Error(`predict --serve ended before answering ${id}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
      const reply = tryParse(next.value);
      if (reply?.id === id) {
        replies.push(reply);
        break;
      }
      stray.push(next.value);
    }
  }
  child.stdin.end();
  return { replies, stray, code: await exited, stderr };
}

function tryParse(line: string): PredictReply | undefined {
  try {
    return JSON.parse(line) as PredictReply;
  } catch {
    return undefined;
  }
}

/**
 * The reference trainers' check of `predict --serve`: `checkpoint`, then `bogus` (no checkpoint), then `checkpoint`
 * again, all on `prompts`. Both good requests are answered exactly as the one-shot predict answered into
 * `oneShotFile`; the bad one is refused with `badError` and writes nothing; no stray line; exit 0 at stdin's end.
 */
export async function expectServedAsOneShot(
  argv: string[],
  env: NodeJS.ProcessEnv,
  o: { checkpoint: string; bogus: string; prompts: string; oneShotFile: string; scratch: string; badError: RegExp },
): Promise<void> {
  const out = (k: number) => path.join(o.scratch, `served-${k}.jsonl`);
  const served = await serveRequests(argv, env, [
    { checkpoint: o.checkpoint, prompts: o.prompts, out: out(1) },
    { checkpoint: o.bogus, prompts: o.prompts, out: out(2) },
    { checkpoint: o.checkpoint, prompts: o.prompts, out: out(3) },
  ]);
  expect(served.replies.map((r) => r.ok)).toEqual([true, false, true]);
  expect(served.replies[1].error).toMatch(o.badError);
  expect(fs.existsSync(out(2))).toBe(false);
  const oneShot = fs.readFileSync(o.oneShotFile, 'utf8');
  expect(fs.readFileSync(out(1), 'utf8')).toBe(oneShot);
  expect(fs.readFileSync(out(3), 'utf8')).toBe(oneShot);
  expect(served.stray).toEqual([]);
  expect(served.code).toBe(0);
}
