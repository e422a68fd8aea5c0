// scoreCheckpoint: grades a frozen checkpoint on one split of an eval suite. The trainer's `predict` answers
// the prompts; Flywheel's graders score them and Flywheel computes the loss itself. Held-out items never leave
// this activity: the result carries ids and scores only, and every read of them is logged with its reader.
import { Context } from '@temporalio/activity';
import { and, eq } from 'drizzle-orm';
import { NotFoundError } from '../../core/errors';
import { COMPLETION_BUDGET, gradeExactToken } from '../../core/graders';
import { checkpoints, evalItems, evalResults, experiments, heldoutReads } from '../../db/schema';
import { loadCampaignSpec } from '../campaign/load-campaign';
import type { ActivityDeps } from '../deps';
import { evalDirOf } from '../paths';
import { verifyCheckpoint } from '../training/manifest';
import { lossScorerFor } from './loss-scorers';
import { runPredict } from './run-predict';

export type EvalSplit = 'public' | 'heldout';

export interface ScoreCheckpointInput {
  checkpointId: string;
  suiteId: string;
  split: EvalSplit;
  /** Why the split is read (`select`, `winner`, `baseline`, `gate`): recorded with every held-out read. */
  purpose: string;
}

export interface ScoreResult {
  checkpointId: string;
  split: EvalSplit;
  itemCount: number;
  /** `exact_match` (share of exact-token items right) and `bits_per_byte` (when Flywheel can read the format). */
  metrics: Record<string, number>;
}

export async function scoreCheckpoint(deps: ActivityDeps, input: ScoreCheckpointInput): Promise<ScoreResult> {
  const { db } = deps;
  const id = `${input.checkpointId}|${input.suiteId}|${input.split}`;
  const [done] = await db.select().from(evalResults).where(eq(evalResults.id, id));
  if (done) return { checkpointId: input.checkpointId, split: input.split, itemCount: done.itemCount, metrics: done.metrics };

  const [ckpt] = await db.select().from(checkpoints).where(eq(checkpoints.id, input.checkpointId));
  if (!ckpt) throw new NotFoundError(`checkpoint "${input.checkpointId}" does not exist`);
  verifyCheckpoint(ckpt.path, ckpt.sha256, input.checkpointId);
  const [exp] = await db.select().from(experiments).where(eq(experiments.id, ckpt.experimentId));
  const spec = await loadCampaignSpec(db, exp.campaignId);

  const items = await db.select().from(evalItems).where(and(eq(evalItems.suiteId, input.suiteId), eq(evalItems.split, input.split)));
  if (items.length === 0) throw new NotFoundError(`eval suite "${input.suiteId}" has no ${input.split} items`);
  if (input.split === 'heldout') {
    const info = Context.current().info;
    await db.insert(heldoutReads).values({ suiteId: input.suiteId, reader: `${info.workflowExecution?.workflowId ?? "standalone"}:${info.activityType}`, purpose: input.purpose });
  }

  const perItem: Record<string, number> = {};
  const metrics: Record<string, number> = {};
  const completion = items.filter((i) => i.grader === 'exact_token');
  if (completion.length > 0) {
    const predictions = await runPredict({
      command: spec.trainer.command,
      checkpointFile: ckpt.path,
      prompts: completion.map((i) => ({ id: i.id, prompt: i.prompt, maxBytes: COMPLETION_BUDGET })),
      workDir: evalDirOf(deps.home, input.checkpointId, input.split),
      signal: Context.current().cancellationSignal,
    });
    let right = 0;
    for (const i of completion) right += perItem[i.id] = gradeExactToken(predictions.get(i.id)!, i.reference);
    metrics.exact_match = right / completion.length;
  }
  const loss = items.filter((i) => i.grader === 'bits_per_byte');
  const scorer = lossScorerFor(ckpt.format);
  if (loss.length > 0 && scorer) {
    const scores = scorer(ckpt.path, loss);
    Object.assign(perItem, scores.perItem);
    metrics.bits_per_byte = scores.bitsPerByte;
  }

  await db
    .insert(evalResults)
    .values({ id, checkpointId: input.checkpointId, experimentId: ckpt.experimentId, suiteId: input.suiteId, split: input.split, itemCount: items.length, metrics, perItem })
    .onConflictDoNothing();
  const score = metrics[spec.selection.metric];
  if (score !== undefined) {
    const column = input.split === 'public' ? { publicScore: score } : { heldoutScore: score };
    await db.update(experiments).set(column).where(eq(experiments.id, ckpt.experimentId));
  }
  return { checkpointId: input.checkpointId, split: input.split, itemCount: items.length, metrics };
}
