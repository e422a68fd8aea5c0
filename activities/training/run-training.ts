// runTraining: one training attempt as one activity (a capacity slot, the launch, the wait for the job's end, the
// slot's release) where the experiment workflow made four round trips. Each step is the idempotent function it was as
// an activity of its own, so a retry after a crash re-enters where the last try stopped: a run already launched (its
// training_runs row) is neither granted nor launched again, the wait reattaches from its heartbeat, the release (in
// the statement that records the run's end) is a no-op the second time. A try that ends without an outcome (a cancel,
// a crash, a refused launch) keeps its slot: the workflow releases it, as it did before. Since SCORED_WITH_TRAINING (a
// warm-trained campaign), a run that succeeds has its checkpoint scored on the public split here, after its slot is
// released, by the same scoreCheckpoint the eval queue runs: one activity per attempt where there were two; since
// ENDED_WITH_SCORE, the experiment's success is recorded with its score (one statement, where the workflow's local
// finishExperiment was another). A retry finds its run ended (nothing is launched twice) and answers from the score
// already recorded (its workflow then records the experiment's end itself), or scores where none was.
import { withAutoHeartbeat } from '../auto-heartbeat';
import { scoreCheckpoint } from '../eval/score-checkpoint';
import { CONTRACT_ERROR_TYPES, publicScoringBroke } from '../../contracts/eval';
import { acquireSlotOf } from '../capacity/acquire-capacity';
import { NotFoundError } from '../../core/errors';
import { campaignOfRow } from '../campaign-of';
import { launchInputs } from '../../services/launch-inputs';
import type { ActivityDeps } from '../deps';
import { runIdOf } from '../../contracts/run-id';
import type { RunTrainingInput, TrainingOutcome } from '../../contracts/training';
import { awaitTraining } from './await-training';
import { launchRun } from './launch-training';

export async function runTraining(deps: ActivityDeps, input: RunTrainingInput): Promise<TrainingOutcome> {
  const key = { experimentId: input.experimentId, attempt: input.attempt };
  const runId = runIdOf(input.experimentId, input.attempt);
  // Whether the attempt was launched already, and what its launch reads (the experiment, its dataset version, its
  // warm start, its campaign's spend): one statement, where there were three (the run, the experiment, the inputs).
  const read = await launchInputs(deps.db, input.experimentId, runId);
  if (!read) throw new NotFoundError(`experiment "${input.experimentId}" does not exist`);
  let launched = read.launched;
  if (!launched) {
    const { firstTry } = await acquireSlotOf(deps, key, read.exp);
    // A slot that took a wait may have let other runs end and spend meanwhile: the launch reads its inputs again.
    const inputs = firstTry ? read : undefined;
    // The launch may take seconds on a cluster (sbatch, a Kubernetes Job): it heartbeats, as it did on its own.
    const { handle, run } = await withAutoHeartbeat((i: typeof key) => launchRun(deps, i, inputs))(key);
    launched = { handle, ...run };
  }
  // The run's start, verdict and campaign as just read or written: awaitTraining does not read them again. Only with
  // an outcome is its slot freed, in the statement that records the end (a worker shutting down mid-wait leaves the
  // job running, and its slot with it).
  const campaign = { id: read.exp.campaignId, spec: await campaignOfRow(deps, read.exp) };
  const outcome = await awaitTraining(
    deps,
    {
      runId,
      experimentId: input.experimentId,
      innerLoopId: input.innerLoopId,
      handle: launched.handle,
      pruning: input.pruning,
      timeoutSeconds: input.timeoutSeconds,
    },
    { startedAt: launched.startedAt, verdict: launched.verdict, campaign },
  );
  if (!input.scorePublic || outcome.status !== 'succeeded' || !outcome.checkpointId) return outcome;
  return { ...outcome, ...(await scorePublicSplit(deps, outcome.checkpointId, input.scorePublic.suiteId)) };
}

/**
 * The checkpoint's public metrics, with the experiment's success recorded beside them (`experimentEnded`), or why its
 * output broke the contract; heartbeating (the training queue's 10 s) while it scores.
 */
async function scorePublicSplit(
  deps: ActivityDeps,
  checkpointId: string,
  suiteId: string,
): Promise<Pick<TrainingOutcome, 'publicMetrics' | 'scoringBroke' | 'experimentEnded'>> {
  try {
    const score = withAutoHeartbeat((i: Parameters<typeof scoreCheckpoint>[1]) => scoreCheckpoint(deps, i, true));
    const scored = await score({ checkpointId, suiteId, split: 'public', purpose: 'select' });
    return { publicMetrics: scored.metrics, ...(scored.experimentEnded ? { experimentEnded: true } : {}) };
  } catch (e) {
    if (e instanceof Error && CONTRACT_ERROR_TYPES.includes(e.name)) return { scoringBroke: publicScoringBroke(e.message) };
    throw e;
  }
}
