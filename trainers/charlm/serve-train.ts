// `train --serve`: the job contract's warm training protocol (core/job-contract.ts TrainRequest) over trainCommand,
// through the shared loop (serve-requests.ts). A run that fails is answered with its one-line reason, also printed on
// stderr as a one-shot run prints it, and the process keeps serving: a run's result depends only on its run.json (its
// seed included), never on the runs before it, since trainCommand keeps no state.
import type { TrainRequest } from '../../core/job-contract';
import { serveRequests } from './serve-requests';
import { trainCommand } from './train-command';

export function serveTrain(): Promise<void> {
  return serveRequests<TrainRequest>(
    (req) => trainCommand(req.runDir),
    (message) => process.stderr.write(`charlm: ${message}\n`),
  );
}
