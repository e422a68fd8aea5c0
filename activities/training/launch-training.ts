// launchTraining: writes run.json and starts the trainer on the campaign's backend. Idempotent per
// (experiment, attempt): the run id is derived from both, and the backend returns the job it already started.
import fs from 'node:fs';
import path from 'node:path';
import { NotFoundError } from '../../core/errors';
import { resolveLimits } from '../../core/resource-limits';
import { makeLaunchDir } from '../../backends/run-dir-files';
import { TRAIN_EXAMPLES_FILE, TRAIN_PAIRS_FILE } from '../../core/dataset/example-line';
import { TRAIN_TEXT_FILE } from '../../core/contract-files';
import { RUN_JSON, type RunJson } from '../../core/job-contract';
import { refuseOverBudget } from '../../services/cost-ledger';
import { launchInputs, type LaunchInputs } from '../../services/launch-inputs';
import { recordLaunch, type RunStart } from '../../services/training-runs';
import { campaignOfRow } from '../campaign-of';
import { withDefaults, type ActivityDeps } from '../deps';
import { runDirOf } from '../../services/paths';
import { runIdOf } from '../../contracts/run-id';
import { ISOLATION_FILE, trainCommand } from './train-command';
import { serveRequestOf } from './warm-train';
import type { LaunchTrainingInput, LaunchTrainingResult } from '../../contracts/training';

export { runIdOf } from '../../contracts/run-id';

export async function launchTraining(deps: ActivityDeps, input: LaunchTrainingInput): Promise<LaunchTrainingResult> {
  const { runId, handle } = await launchRun(deps, input);
  return { runId, handle };
}

/**
 * The launch, with the run's start and stored verdict as its record returned them (runTraining follows the job from
 * them). `inputs`: what launchInputs returned just now (runTraining's read, trusted only when its slot came at once).
 */
export async function launchRun(
  deps: ActivityDeps,
  input: LaunchTrainingInput,
  inputs?: LaunchInputs,
): Promise<LaunchTrainingResult & { run: RunStart }> {
  const { db } = deps;
  // The experiment, its dataset version, its loop's warm start and its campaign's spend: one statement.
  const read = inputs ?? (await launchInputs(db, input.experimentId));
  if (!read) throw new NotFoundError(`experiment "${input.experimentId}" does not exist`);
  const { exp, version, warmStart } = read;
  const spec = await campaignOfRow(deps, exp);
  const runId = runIdOf(input.experimentId, input.attempt);
  const runDir = runDirOf(deps.home, runId);
  // The cap is checked before every launch. A retry of a launch that got as far as run.json may have started the
  // job already: it is not refused, or the job would run on with nobody following it.
  if (!fs.existsSync(path.join(runDir, RUN_JSON))) refuseOverBudget(exp.campaignId, read.spent, spec);
  if (!version) throw new NotFoundError(`dataset version "${exp.datasetVersionId}" does not exist`);

  fs.mkdirSync(runDir, { recursive: true });
  const runJson: RunJson = {
    runId,
    experimentId: exp.id,
    recipe: spec.trainer.command === 'builtin' ? 'charlm' : 'custom',
    params: { ...spec.trainer.fixed, ...exp.params },
    seed: spec.innerLoop.seed * 1000 + exp.index,
    dataset: {
      versionId: version.id,
      path: version.path,
      trainFile: path.join(version.path, TRAIN_TEXT_FILE),
      ...(fs.existsSync(path.join(version.path, TRAIN_EXAMPLES_FILE))
        ? { examplesFile: path.join(version.path, TRAIN_EXAMPLES_FILE) }
        : {}),
      ...(fs.existsSync(path.join(version.path, TRAIN_PAIRS_FILE)) ? { pairsFile: path.join(version.path, TRAIN_PAIRS_FILE) } : {}),
    },
    baseCheckpoint: warmStart ? baseCheckpointPath(warmStart) : null,
    checkpointEvery: 0,
  };
  writeOnce(path.join(runDir, RUN_JSON), JSON.stringify(runJson, null, 2));

  const backend = withDefaults(deps).backendFor(spec.backend.kind, spec.backend);
  const common = { runId, runDir, campaignId: exp.campaignId, timeLimitSeconds: spec.innerLoop.trainingTimeoutSeconds };
  const limits = resolveLimits(spec.trainer.limits);
  // On a warm trainer (trainer.warmTrain), which records its own isolation when it takes the run; else a process of its own.
  const serve = serveRequestOf(spec, deps.home, exp, runJson);
  let handle;
  if (serve) handle = await backend.launch({ ...common, argv: [], limits, serve });
  else {
    // A patch experiment runs its own recipe commit; any other, the version's pinned one (when the spec has a recipe).
    const { argv, env, isolation } = trainCommand(spec, deps.home, runJson, runDir, exp.recipeCommit);
    writeOnce(path.join(makeLaunchDir(runDir), ISOLATION_FILE), JSON.stringify(isolation) + '\n');
    handle = await backend.launch({ ...common, argv, env, limits });
  }
  // The run's row (with its slot's wait) and the experiment's start: one statement.
  const run = await recordLaunch(db, { id: runId, experimentId: exp.id, attempt: input.attempt, backend: backend.kind, handle, runDir });
  return { runId, handle, run };
}

/** The warm start's file; its checkpoint must exist (as warmStartOfLoop requires). */
function baseCheckpointPath(warmStart: { checkpointId: string; path: string | undefined }): string {
  if (warmStart.path === undefined) throw new NotFoundError(`warm-start checkpoint "${warmStart.checkpointId}" does not exist`);
  return warmStart.path;
}

/** Written once (run.json, isolation.json): a retried launch must not change what a running trainer reads. */
function writeOnce(file: string, content: string): void {
  if (fs.existsSync(file)) return;
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}
