// checkTrainer: the inner loop's first step, on the training worker, before anything is written. It builds the
// command a launch would build for the campaign's trainer (program resolved on this worker's PATH, sandbox made),
// checks that the paths the spec shows the trainer hide nothing the sandbox exists to hide (FLYWHEEL_HOME, /tmp,
// PostgreSQL's sockets, Flywheel's scratch, a registered suite's file), and answers with the reason when the trainer
// could not start, so a typo in `trainer.command` costs no rows. An `hf` trainer's model and tokenizer must be
// loadable from what the spec names (backends/hf-model-check.ts: a local folder it is shown, or a hub id with the
// network on and the hub answering), not found missing by the baseline minutes later; a warm-trainer campaign's trainer
// must speak `train --serve` (warm-train.ts serveProblem).
import os from 'node:os';
import { hfSourceProblems } from '../../backends/hf-model-check';
import { exposedPathProblems, exposedPaths } from '../../backends/sandbox/exposed-paths';
import { SANDBOXED_BACKENDS, trainerStart } from '../../backends/sandbox/trainer-start';
import { predictScratchRoot } from '../../services/paths';
import { registeredSuiteSources } from '../../services/suites/suite-sources';
import type { CheckTrainerInput, TrainerCheck } from '../../contracts/training';
import { campaignsOf, type ActivityDeps } from '../deps';
import { isolationRequest, trainerSetupOf } from './trainer-isolation';
import { serveProblem } from './warm-train';

export async function checkTrainer(deps: ActivityDeps, input: CheckTrainerInput): Promise<TrainerCheck> {
  const spec = await campaignsOf(deps).resolve(input.campaignVersionId);
  const host = os.hostname();
  const exposure = exposedPathProblems(exposedPaths(spec.trainer), {
    home: deps.home,
    scratch: [predictScratchRoot()],
    suiteSources: await registeredSuiteSources(deps.db),
    ownUid: process.getuid?.() === 0,
  });
  if (exposure.length > 0) return { ok: false, host, reason: `the trainer's sandbox would show it what it must not see: ${exposure[0]}` };
  if (!SANDBOXED_BACKENDS.has(spec.backend.kind)) return { ok: true, host, sandbox: 'cluster' };
  // The run directory does not exist yet: the paths only shape the sandbox's mounts, which are not made here.
  const start = trainerStart(isolationRequest(trainerSetupOf(spec, deps.home), 'train', [], { cwd: deps.home, data: [], readWrite: [] }));
  if (!start.ok) return { ok: false, host, reason: `the trainer cannot start on the training worker (${host}): ${start.problem}` };
  // A warm-trainer campaign's trainer must speak `train --serve`, or every run would fail.
  const serve = spec.trainer.warmTrain && spec.backend.kind === 'local' ? await serveProblem(spec, deps.home) : undefined;
  if (serve)
    return { ok: false, host, reason: `trainer.warmTrain: the trainer does not serve runs on the training worker (${host}): ${serve}` };
  const [source] = await hfSourceProblems(spec, deps.home);
  if (source) return { ok: false, host, reason: `the trainer cannot load its model on the training worker (${host}): ${source.text}` };
  return { ok: true, host, sandbox: start.sandbox };
}
