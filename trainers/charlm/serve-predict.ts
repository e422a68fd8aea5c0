// `predict --serve`: the job contract's warm protocol (core/job-contract.ts PredictRequest) over predictCommand, through
// the shared loop (serve-requests.ts): one request a line on stdin, one reply line on stdout each, until stdin ends.
import type { PredictRequest } from '../../core/job-contract';
import { predictCommand } from './predict-command';
import { serveRequests } from './serve-requests';

export function servePredict(): Promise<void> {
  return serveRequests<PredictRequest>((req) => predictCommand(req.checkpoint, req.prompts, req.out));
}
