// runTraining: one training attempt as one activity (a capacity slot, the launch, the wait for the job's end, the
// slot's release) where the experiment workflow made four round trips. Each step is the idempotent function it was as
// an activity of its own, so a retry after a crash re-enters where the last try stopped: a run already launched (its
// training_runs row) is neither granted nor launched again, the wait reattaches from its heartbeat, the release is a
// no-op the second time. A try that ends without an outcome (a cancel, a crash, a refused launch) keeps its slot: the
// workflow releases it, as it did before. Since SCORED_WITH_TRAINING (a warm-trained campaign), a run that succeeds
// has its checkpoint scored on the public split here, after its slot is released, by the same scoreCheckpoint the eval
// queue runs: one activity per attempt where there were two. A retry finds its run ended (nothing is launched twice)
// and answers from the score already recorded, or scores where none was.
import { withAutoHeartbeat } from '../auto-heartbeat';
import { scoreCheckpoint } from '../eval/score-checkpoint';
import { CONTRACT_ERROR_TYPES, publicScoringBroke } from '../../contracts/eval';
import { acquireCapacity } from '../capacity/acquire-capacity';
import { releaseSlot } from '../../services/capacity';
import { launchedRun } from '../../services/training-runs';
import type { ActivityDeps } from '../deps';
import { runIdOf } from '../../contracts/run-id';
import type { RunTrainingInput, TrainingOutcome } from '../../contracts/training';
import { awaitTraining } from './await-training';
import { launchRun } from './launch-training';

export async function runTraining(deps: ActivityDeps, input: RunTrainingInput): Promise<TrainingOutcome> {
  const key = { experimentId: input.experimentId, attempt: input.attempt };
  const runId = runIdOf(input.experimentId, input.attempt);
  let launched = await launchedRun(deps.db, runId);
  if (!launched) {
    await acquireCapacity(deps, key);
    // The launch may take seconds on a cluster (sbatch, a Kubernetes Job): it heartbeats, as it did on its own.
    const { handle, run } = await withAutoHeartbeat((i: typeof key) => launchRun(deps, i))(key);
    launched = { handle, ...run };
  }
  // The run's start and verdict as just read or written: awaitTraining does not read them again.
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
    launched,
  );
  // Only after an outcome: a worker shutting down mid-wait leaves the job running, and its slot with it.
  await releaseSlot(deps.db, runId);
  if (!input.scorePublic || outcome.status !== 'succeeded' || !outcome.checkpointId) return outcome;
  return { ...outcome, ...(await scorePublicSplit(deps, outcome.checkpointId, input.scorePublic.suiteId)) };
}

/** The checkpoint's public metrics, or why its output broke the contract; heartbeating (the training queue's 10 s) while it scores. */
async function scorePublicSplit(
  deps: ActivityDeps,
  checkpointId: string,
  suiteId: string,
): Promise<{ publicMetrics?: Record<string, number>; scoringBroke?: string }> {
  try {
    const score = withAutoHeartbeat((i: Parameters<typeof scoreCheckpoint>[1]) => scoreCheckpoint(deps, i));
    const scored = await score({ checkpointId, suiteId, split: 'public', purpose: 'select' });
    return { publicMetrics: scored.metrics };
  } catch (e) {
    if (e instanceof Error && CONTRACT_ERROR_TYPES.includes(e.name)) return { scoringBroke: publicScoringBroke(e.message) };
    throw e;
  }
}
