// A campaign's outer iterations, with the held-out and sealed test figures their summaries carry (the production score
// over time).
import { count, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { innerLoops, outerIterations } from '../../db/schema';

export type OuterIterationRow = Awaited<ReturnType<typeof outerIterationsOf>>[number];

export const outerIterationsOf = (db: Db, campaignId: string) =>
  db
    .select({
      id: outerIterations.id,
      iteration: outerIterations.iteration,
      workflow_id: outerIterations.workflowId,
      trigger: outerIterations.trigger,
      status: outerIterations.status,
      new_feedback: outerIterations.newFeedback,
      dataset_version_id: outerIterations.datasetVersionId,
      inner_loop_id: outerIterations.innerLoopId,
      candidate_checkpoint_id: outerIterations.candidateCheckpointId,
      decision_id: outerIterations.decisionId,
      reason: sql<string | null>`${outerIterations.summary}->>'reason'`,
      heldout_metric: sql<string | null>`${outerIterations.summary}->'heldout'->>'metric'`,
      heldout_candidate: sql<number | null>`(${outerIterations.summary}->'heldout'->>'candidate')::float8`,
      heldout_incumbent: sql<number | null>`(${outerIterations.summary}->'heldout'->>'incumbent')::float8`,
      heldout_production: sql<number | null>`(${outerIterations.summary}->'heldout'->>'production')::float8`,
      /** The sealed test split, scored on a promotion for the record (contracts/outer-loop.ts `test`). */
      test_metric: sql<string | null>`${outerIterations.summary}->'test'->>'metric'`,
      test_production: sql<number | null>`(${outerIterations.summary}->'test'->>'production')::float8`,
      test_before: sql<number | null>`(${outerIterations.summary}->'test'->>'before')::float8`,
      test_items: sql<number | null>`(${outerIterations.summary}->'test'->>'items')::int`,
      test_error: sql<string | null>`${outerIterations.summary}->'test'->>'error'`,
      created_at: outerIterations.createdAt,
      finished_at: outerIterations.finishedAt,
      /** The inner loop winner's public score (the selection metric). */
      inner_best_public: sql<number | null>`(${innerLoops.summary}->'best'->>'publicScore')::float8`,
    })
    .from(outerIterations)
    .leftJoin(innerLoops, eq(innerLoops.id, outerIterations.innerLoopId))
    .where(eq(outerIterations.campaignId, campaignId))
    .orderBy(outerIterations.iteration, outerIterations.attempt);

/** How many outer iterations (attempts included) a campaign has recorded. */
export const countOuterIterations = async (db: Db, campaignId: string): Promise<number> =>
  (await db.select({ n: count() }).from(outerIterations).where(eq(outerIterations.campaignId, campaignId)))[0]?.n ?? 0;
