// `predict --serve`: the job contract's warm protocol (core/job-contract.ts PredictRequest) over predictCommand. One
// request a line on stdin, one reply line on stdout each, until stdin ends; a request that fails is answered with
// its one-line reason and the process keeps serving.
import readline from 'node:readline';
import type { PredictReply, PredictRequest } from '../../core/job-contract';
import { predictCommand } from './predict-command';

export async function servePredict(): Promise<void> {
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const req = JSON.parse(line) as PredictRequest;
    let reply: PredictReply;
    try {
      predictCommand(req.checkpoint, req.prompts, req.out);
      reply = { id: req.id, ok: true };
    } catch (err) {
      reply = { id: req.id, ok: false, error: (err as Error).message.split('\n')[0] };
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}
