// The inner loop's last steps, once the search is over: only the winner and the untrained baseline are ever scored
// on held-out, so held-out cannot steer the search; then the loop's row ends with the result.
import type { SelectedBest } from '../contracts/inner-activities';
import type { InnerLoopResult } from '../contracts/inner-loop';
import type { ScoreResult } from '../contracts/eval';
import type { RunningInnerLoop } from './inner-loop-runtime';

/** The search is over: a stop asked for at any point is the reason. */
export function endSearch(loop: RunningInnerLoop): void {
  if (loop.stopRequested) loop.stoppedBy = 'stop';
  loop.phase = loop.stopRequested ? 'stopping' : 'scoring-winner';
}

/**
 * Selects the winner, scores it and the baseline on held-out, records the loop's end; the result. One function:
 * each command follows the previous one's result directly, as before (see inner-loop-batch.ts).
 */
export async function scoreAndRecord(loop: RunningInnerLoop): Promise<InnerLoopResult> {
  const s = loop.state;
  const { innerLoopId, orch } = loop;
  loop.phase = 'scoring-winner';
  const best = await orch.selectBest({ innerLoopId, metric: s.settings.selection.metric, mode: s.settings.selection.mode });
  const heldout: InnerLoopResult['heldout'] = {};
  if (best) heldout.best = (await scoreHeldout(loop, best.checkpointId, 'winner')).metrics;
  if (s.baseline.checkpointId) heldout.baseline = (await scoreHeldout(loop, s.baseline.checkpointId, 'baseline')).metrics;
  const result = loopResult(loop, best, heldout);
  await orch.finishInnerLoop({
    innerLoopId,
    status: loop.stoppedBy === 'stop' ? 'stopped' : 'completed',
    bestExperimentId: best?.experimentId,
    summary: { ...result },
  });
  loop.phase = 'done';
  return result;
}

function scoreHeldout(loop: RunningInnerLoop, checkpointId: string, purpose: 'winner' | 'baseline'): Promise<ScoreResult> {
  return loop.evals.scoreCheckpoint({ checkpointId, suiteId: loop.state.task.suiteId, split: 'heldout', purpose });
}

function loopResult(loop: RunningInnerLoop, best: SelectedBest | null, heldout: InnerLoopResult['heldout']): InnerLoopResult {
  const { budgetStop } = loop;
  return {
    innerLoopId: loop.innerLoopId,
    experiments: loop.state.launched,
    stoppedBy: loop.stoppedBy,
    best: best
      ? { experimentId: best.experimentId, checkpointId: best.checkpointId, params: best.params, publicScore: best.publicScore }
      : undefined,
    heldout,
    baselineCheckpointId: loop.state.baseline.checkpointId,
    ...(budgetStop !== undefined ? { budgetExceeded: budgetStop } : {}),
  };
}
