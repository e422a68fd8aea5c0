// Experiment rows: one per proposed experiment of an inner loop (its params, status, scores and timestamps). The
// training and eval activities move an experiment through its states here; the inner loop's activities add theirs.
import { eq, inArray } from 'drizzle-orm';
import { checkpoints, experiments, innerLoops } from '../db/schema';
import type { Queryable } from './queryable';

export type Experiment = typeof experiments.$inferSelect;

/** What resolving an experiment's campaign needs: its id, campaign and pinned campaign version. */
export interface ExperimentRef {
  id: string;
  campaignId: string;
  campaignVersionId: string | null;
}

/** The experiment's whole row, or undefined. */
export async function experimentById(q: Queryable, id: string): Promise<Experiment | undefined> {
  const [row] = await q.select().from(experiments).where(eq(experiments.id, id));
  return row;
}

/** The experiment's campaign and pinned version, or undefined. */
export async function experimentRef(q: Queryable, id: string): Promise<ExperimentRef | undefined> {
  const [row] = await q
    .select({ id: experiments.id, campaignId: experiments.campaignId, campaignVersionId: experiments.campaignVersionId })
    .from(experiments)
    .where(eq(experiments.id, id));
  return row;
}

/** Its workflow cancelled the experiment while it trained. */
export async function markExperimentCancelled(q: Queryable, id: string, at: Date): Promise<void> {
  await q.update(experiments).set({ status: 'cancelled', finishedAt: at }).where(eq(experiments.id, id));
}

/**
 * Per checkpoint: the campaign version its experiment pinned and its loop's summary (a seed-rerun group records its
 * trainer there: activities/outer/plan-seed-reruns.ts). Checkpoints with no experiment are left out.
 */
export async function checkpointLoops(
  q: Queryable,
  checkpointIds: readonly string[],
): Promise<{ checkpointId: string; campaignVersionId: string | null; loopSummary: Record<string, unknown> | null }[]> {
  if (checkpointIds.length === 0) return [];
  return q
    .select({ checkpointId: checkpoints.id, campaignVersionId: experiments.campaignVersionId, loopSummary: innerLoops.summary })
    .from(checkpoints)
    .innerJoin(experiments, eq(experiments.id, checkpoints.experimentId))
    .leftJoin(innerLoops, eq(innerLoops.id, experiments.innerLoopId))
    .where(inArray(checkpoints.id, [...checkpointIds]));
}
