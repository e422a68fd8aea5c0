// innerLoop: propose a batch → run each proposal as an `experiment` child (at most `parallelism` at once)
// → keep the best by the spec's rule on the public split → repeat until the budget, a plateau or a stop.
// Only the winner and the untrained baseline are scored on held-out, after the search is over.
// The steps live in inner-loop-*.ts; what they share with the signal, update and query handlers is one runtime
// object (inner-loop-runtime.ts), and what continue-as-new carries is its `state`. Each command keeps its place
// relative to an update's reply in the same workflow task (see inner-loop-batch.ts). Two moved a microtask later
// when the steps were split, where no reply can come between the old place and the new: the search attributes and
// the baseline after a fresh start's preparation (both updates' validators refuse until the state exists), and the
// workflow's completion (a reply to a synchronous handler precedes it either way). Since BASELINE_FIRST_PATCH a
// fresh loop waits for its baseline before the first batch.
import { continueAsNew } from '@temporalio/workflow';
import type { InnerLoopResult, InnerLoopStart } from '../contracts/inner-loop';
import { analyzeBatch, endsBy, historyIsLong, keepBatchBest, proposeBatch, runBatch, unpausedOrStopped } from './inner-loop-batch';
import { endSearch, scoreAndRecord } from './inner-loop-end';
import { handleInnerLoopMessages } from './inner-loop-handlers';
import { isRunning, openInnerLoop } from './inner-loop-runtime';
import { baselineFirst, baselineRun, markRunning, prepareInnerLoop, startBaseline } from './inner-loop-start';
import { innerLoopInputOf } from './loop-input';

export async function innerLoop(given: InnerLoopStart): Promise<InnerLoopResult> {
  const input = await innerLoopInputOf(given);
  const opened = openInnerLoop(input);
  handleInnerLoopMessages(opened);
  // A continued execution has its state already, and takes no await before its first batch.
  const loop = isRunning(opened) ? opened : await prepareInnerLoop(opened);
  const s = loop.state;
  markRunning(loop);
  startBaseline(loop);
  // A fresh loop's failing baseline ends it here, before any experiment (inner-loop-start.ts BASELINE_FIRST_PATCH);
  // one stopped by the cost cap ends the search as an experiment's would.
  const searching = baselineFirst(loop) ? (await baselineRun(loop), !endsBy(loop, 'budget')) : true;
  while (searching && s.launched < s.settings.experiments) {
    if (endsBy(loop, 'plateau')) break;
    await unpausedOrStopped(loop);
    if (endsBy(loop, 'stop')) break;
    const proposals = await proposeBatch(loop);
    await runBatch(loop, proposals);
    s.batches++;
    if (proposals.length > 0) await analyzeBatch(loop, proposals);
    keepBatchBest(loop, proposals);
    if (endsBy(loop, 'stop') || endsBy(loop, 'budget')) break;
    if (historyIsLong(loop)) {
      await baselineRun(loop);
      await continueAsNew<typeof innerLoop>({ ...input, carry: s });
    }
  }
  endSearch(loop);
  await baselineRun(loop);
  return scoreAndRecord(loop);
}
