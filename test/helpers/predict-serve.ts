// Drives a trainer's `predict --serve` directly, as the eval worker's servers do (core/job-contract.ts
// PredictRequest): each request sent after the last one's reply, then stdin closed. For the trainers' own tests of the
// warm protocol, outside any pool or sandbox.
import { spawn } from 'node:child_process';
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
