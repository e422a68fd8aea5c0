// Experiment rows: one per proposed experiment of an inner loop (its params, status, scores and timestamps). The
// training and eval activities move an experiment through its states here; the inner loop's activities add theirs.
import { eq, sql } from 'drizzle-orm';
import { experiments } from '../db/schema';
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

/** A launch started its training: running, started at its first launch (a relaunch keeps the first start). */
export async function markExperimentRunning(q: Queryable, id: string): Promise<void> {
  await q
    .update(experiments)
    .set({ status: 'running', startedAt: sql`coalesce(${experiments.startedAt}, now())` })
    .where(eq(experiments.id, id));
}

/** Its workflow cancelled the experiment while it trained. */
export async function markExperimentCancelled(q: Queryable, id: string, at: Date): Promise<void> {
  await q.update(experiments).set({ status: 'cancelled', finishedAt: at }).where(eq(experiments.id, id));
}

/** Adds a capacity wait to the experiment's total (called once per granted run, inside the grant's transaction). */
export async function addCapacityWait(q: Queryable, id: string, seconds: number): Promise<void> {
  await q
    .update(experiments)
    .set({ capacityWaitSeconds: sql`coalesce(${experiments.capacityWaitSeconds}, 0) + ${seconds}` })
    .where(eq(experiments.id, id));
}

/** The score the experiment is ranked by: its public (selection) or held-out (gate) figure. */
export async function setExperimentScore(
  q: Queryable,
  id: string,
  score: { publicScore: number } | { heldoutScore: number },
): Promise<void> {
  await q.update(experiments).set(score).where(eq(experiments.id, id));
}
