// `train --serve`: the job contract's warm training protocol (core/job-contract.ts TrainRequest) over trainCommand.
// One run a line on stdin, one reply line on stdout each, until stdin ends. A run that fails is answered with its
// one-line reason (also on stderr, as a one-shot run prints it) and the process keeps serving: a run's result depends
// only on its run.json (its seed included), never on the runs before it, since trainCommand keeps no state.
import readline from 'node:readline';
import type { TrainReply, TrainRequest } from '../../core/job-contract';
import { trainCommand } from './train-command';

export async function serveTrain(): Promise<void> {
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const req = JSON.parse(line) as TrainRequest;
    let reply: TrainReply;
    try {
      trainCommand(req.runDir);
      reply = { id: req.id, ok: true };
    } catch (err) {
      const message = (err as Error).message.split('\n')[0];
      process.stderr.write(`charlm: ${message}\n`);
      reply = { id: req.id, ok: false, error: message };
    }
    process.stdout.write(JSON.stringify(reply) + '\n');
  }
}
