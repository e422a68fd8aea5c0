// outerLoop: one iteration of the campaign's outer loop per execution — claim the feedback since the last
// watermark → teacher critiques (user failures, and the production model's public eval failures) → a new dataset
// version → `innerLoop` as a child (warm-started from production) → the promotion gate on the held-out split →
// optionally a researcher's approval → on a promotion, the sealed test split scored for the record → record the
// decision and move production → continue-as-new while `iterations` asks for more. Schedules, the CLI and the
// Temporal UI all start it the same way. An iteration that fails ends its row with the reason (failOuterIteration)
// before the workflow fails, so the next start makes a new attempt of it with ids of its own. The steps live in
// outer-loop-*.ts.
import { CancellationScope, ContinueAsNew, continueAsNew, upsertSearchAttributes } from '@temporalio/workflow';
import { OUTER_SUMMARY_CAP, type OuterLoopResult, type OuterLoopStart } from '../contracts/outer-loop';
import { failureReason } from '../contracts/failure-reason';
import { CampaignId, LoopKind } from '../contracts/search-attributes';
import { decidePromotion } from './outer-loop-approval';
import { outerLoopInputOf } from './loop-input';
import { gateCandidate } from './outer-loop-gate';
import { scoreSealedTest } from './outer-loop-sealed-test';
import { finish, handleOuterLoopMessages, openOuterLoop, type OuterLoopRuntime } from './outer-loop-runtime';
import { buildDataset, claimIteration, critique, recordIteration, runInnerLoop, startIteration } from './outer-loop-steps';

export { SEED_NOISE_PATCH, SEED_REFERENCE_PATCH } from './outer-loop-gate';
export { SEALED_TEST_PATCH } from './outer-loop-sealed-test';

export async function outerLoop(given: OuterLoopStart): Promise<OuterLoopResult> {
  const input = await outerLoopInputOf(given);
  const loop = openOuterLoop(input);
  handleOuterLoopMessages(loop);
  upsertSearchAttributes([
    { key: CampaignId, value: input.campaignId },
    { key: LoopKind, value: 'outer' },
  ]);
  const claim = await claimIteration(loop);
  if (!claim.claimed)
    return finish(loop, { outerIterationId: '', iteration: 0, status: 'skipped', reason: claim.reason, newFeedback: 0, critiques: 0 });
  try {
    const it = await startIteration(loop, claim);
    const critiques = await critique(loop, it);
    const summary = await buildDataset(loop, it, critiques);
    const inner = await runInnerLoop(loop, it, summary);
    if (!inner) return finish(loop, { ...summary, status: 'skipped', reason: `the inner loop ${loop.innerLoopId} is already running` });
    const { best } = inner;
    if (!best) {
      const reason = `the inner loop produced no scored candidate (stopped by ${inner.stoppedBy})`;
      return next(loop, await recordIteration(loop, it, { ...summary, reason }));
    }
    const gated = await gateCandidate(loop, it, summary, { ...inner, best });
    const decision = await decidePromotion(loop, it, summary, gated, best.experimentId);
    // For the record only, once the decision is made: what the new production model really scores.
    if (decision.promote) await scoreSealedTest(loop, it, summary, gated);
    return next(loop, await recordIteration(loop, it, summary, decision));
  } catch (e) {
    if (e instanceof ContinueAsNew) throw e;
    // The attempt's row ends with the reason, even when the workflow is being cancelled; then the workflow fails.
    const { outerIterationId } = claim;
    await CancellationScope.nonCancellable(() =>
      loop.orch.failOuterIteration({ outerIterationId, reason: failureReason(e), innerLoopId: loop.innerLoopId }),
    );
    throw e;
  }
}

/** Continue as new while more iterations are asked for; otherwise the result. */
async function next(loop: OuterLoopRuntime, result: OuterLoopResult): Promise<OuterLoopResult> {
  const remaining = (loop.input.iterations ?? 1) - 1;
  if (remaining < 1) return result;
  return continueAsNew<typeof outerLoop>({ ...loop.input, iterations: remaining, carry: { done: loop.done.slice(-OUTER_SUMMARY_CAP) } });
}
