// Outer iterations: one row per attempt of an iteration of a campaign's outer loop (`…/outer/i3`, `…/i3-a2`), which
// claimOuterIteration opens under a per-campaign lock, and which ends `failed` with its reason or with the iteration's
// summary. The claim, the fail and the finish write here; the dataset step records the version it built.
import { and, asc, desc, eq, isNotNull, lt, sql } from 'drizzle-orm';
import type { FailedIterationSummary, OuterIterationSummary } from '../contracts/outer-loop';
import { outerIterations } from '../db/schema';
import type { Queryable } from './queryable';

export type OuterIteration = typeof outerIterations.$inferSelect;
export type NewOuterIteration = typeof outerIterations.$inferInsert;

/** The advisory-lock namespace of outer-iteration claims (the second key is the campaign id's hash). */
const CLAIM_LOCK = 0x4f_75_74_72; // "Outr"

/** Takes the campaign's claim lock until the end of `tx`'s transaction: claims of one campaign run one at a time. */
export async function lockIterationClaims(tx: Queryable, campaignId: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK}, hashtext(${campaignId}))`);
}

/** The campaign's attempt that is running, with the workflow run that owns it, if any. */
export async function runningIteration(
  q: Queryable,
  campaignId: string,
): Promise<{ id: string; workflowId: string; workflowRunId: string | null } | undefined> {
  const [row] = await q
    .select({ id: outerIterations.id, workflowId: outerIterations.workflowId, workflowRunId: outerIterations.workflowRunId })
    .from(outerIterations)
    .where(and(eq(outerIterations.campaignId, campaignId), eq(outerIterations.status, 'running')));
  return row;
}

/** The campaign's latest attempt: the highest iteration, and its highest attempt. */
export async function latestIteration(q: Queryable, campaignId: string): Promise<OuterIteration | undefined> {
  const [row] = await q
    .select()
    .from(outerIterations)
    .where(eq(outerIterations.campaignId, campaignId))
    .orderBy(desc(outerIterations.iteration), desc(outerIterations.attempt))
    .limit(1);
  return row;
}

export async function iterationById(q: Queryable, id: string): Promise<OuterIteration | undefined> {
  const [row] = await q.select().from(outerIterations).where(eq(outerIterations.id, id));
  return row;
}

export async function recordIteration(q: Queryable, row: NewOuterIteration): Promise<void> {
  await q.insert(outerIterations).values(row);
}

/** Ends the attempt `failed` with `summary` (its first end time kept). */
export async function endIterationFailed(q: Queryable, id: string, summary: FailedIterationSummary): Promise<void> {
  await q
    .update(outerIterations)
    .set({ status: 'failed', summary, finishedAt: sql`coalesce(${outerIterations.finishedAt}, now())` })
    .where(eq(outerIterations.id, id));
}

/** Ends the attempt `failed` only while it is running (a retry, or an attempt that finished after all, stays as it is). */
export async function failRunningIteration(q: Queryable, id: string, summary: FailedIterationSummary): Promise<void> {
  await q
    .update(outerIterations)
    .set({
      status: 'failed',
      summary,
      innerLoopId: summary.innerLoopId ?? null,
      finishedAt: sql`coalesce(${outerIterations.finishedAt}, now())`,
    })
    .where(and(eq(outerIterations.id, id), eq(outerIterations.status, 'running')));
}

/** Records the iteration's end: its status, what it made, and its summary. */
export async function finishIteration(q: Queryable, id: string, summary: OuterIterationSummary): Promise<void> {
  await q
    .update(outerIterations)
    .set({
      status: summary.status,
      innerLoopId: summary.innerLoopId ?? null,
      candidateCheckpointId: summary.candidateCheckpointId ?? null,
      decisionId: summary.decisionId ?? null,
      summary,
      finishedAt: sql`coalesce(${outerIterations.finishedAt}, now())`,
    })
    .where(eq(outerIterations.id, id));
}

/** The dataset version of the campaign's latest earlier iteration that built one (any attempt), if any. */
export async function previousDatasetVersionId(q: Queryable, campaignId: string, iteration: number): Promise<string | undefined> {
  const [row] = await q
    .select({ versionId: outerIterations.datasetVersionId })
    .from(outerIterations)
    .where(
      and(
        eq(outerIterations.campaignId, campaignId),
        lt(outerIterations.iteration, iteration),
        isNotNull(outerIterations.datasetVersionId),
      ),
    )
    .orderBy(desc(outerIterations.iteration), desc(outerIterations.attempt))
    .limit(1);
  return row?.versionId ?? undefined;
}

export async function setIterationDatasetVersion(q: Queryable, id: string, datasetVersionId: string): Promise<void> {
  await q.update(outerIterations).set({ datasetVersionId }).where(eq(outerIterations.id, id));
}

/**
 * The campaign's first promoted checkpoint (its first production model): the category anchor of later gates
 * (core/gate/category-anchor.ts); undefined before the first promotion.
 */
export async function firstPromotedCheckpointOf(q: Queryable, campaignId: string): Promise<string | undefined> {
  const [row] = await q
    .select({ checkpointId: outerIterations.candidateCheckpointId })
    .from(outerIterations)
    .where(
      and(
        eq(outerIterations.campaignId, campaignId),
        eq(outerIterations.status, 'promoted'),
        isNotNull(outerIterations.candidateCheckpointId),
      ),
    )
    .orderBy(asc(outerIterations.iteration), asc(outerIterations.attempt))
    .limit(1);
  return row?.checkpointId ?? undefined;
}
