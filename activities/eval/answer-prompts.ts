// Which `predict` answers a split's prompts: a public split goes to the campaign's warm predict server when its
// trainer speaks `predict --serve`; held-out and probe prompts, and every trainer that does not, go to a process of
// their own that answers nothing else and ends (run-predict.ts).
import type { PredictPrompt } from '../../core/job-contract';
import { resolveLimits } from '../../core/resource-limits';
import { warmPredictOf } from '../../core/trainer-program';
import type { EvalSplit } from '../../contracts/eval';
import type { ActivityDeps } from '../deps';
import type { TrainerSetup } from '../training/trainer-isolation';
import { sharedPredictServers } from './predict-servers';
import { runPredict } from './run-predict';

export interface AnswerRequest {
  campaignId: string;
  split: EvalSplit;
  trainer: TrainerSetup;
  /** The frozen checkpoint file or folder, its sha256 verified. */
  checkpoint: string;
  prompts: PredictPrompt[];
  signal?: AbortSignal;
}

export async function answerPrompts(deps: ActivityDeps, req: AnswerRequest): Promise<Map<string, string>> {
  // `trainer.limits.predictSeconds`: one predict's wall time, warm or one-shot.
  const timeoutMs = resolveLimits(req.trainer.trainer.limits).predictSeconds * 1000;
  if (req.split === 'public' && warmPredictOf(req.trainer.trainer)) {
    const servers = deps.predictServers ?? sharedPredictServers();
    return servers.predict(req.campaignId, req.trainer, req.checkpoint, req.prompts, { signal: req.signal, timeoutMs });
  }
  return runPredict({ trainer: req.trainer, checkpointFile: req.checkpoint, prompts: req.prompts, signal: req.signal, timeoutMs });
}
