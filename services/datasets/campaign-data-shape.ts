// The shape of the data a campaign trains on now (core/dataset/feedback-shape.ts over the dataset version of its
// latest inner loop): what `flywheel feedback import` compares corrections with. Prompts, completions and
// categories only.
import { desc, eq } from 'drizzle-orm';
import { FeedbackShape } from '../../core/dataset/feedback-shape';
import { examples, innerLoops } from '../../db/schema';
import type { Queryable } from '../queryable';

/** Undefined for a campaign that has trained on nothing yet. */
export async function campaignDataShapeOf(q: Queryable, campaignId: string): Promise<FeedbackShape | undefined> {
  const [loop] = await q
    .select({ versionId: innerLoops.datasetVersionId })
    .from(innerLoops)
    .where(eq(innerLoops.campaignId, campaignId))
    .orderBy(desc(innerLoops.createdAt))
    .limit(1);
  if (!loop) return undefined;
  const rows = await q
    .select({ prompt: examples.prompt, completion: examples.completion, category: examples.category })
    .from(examples)
    .where(eq(examples.datasetVersionId, loop.versionId));
  return new FeedbackShape(rows);
}
