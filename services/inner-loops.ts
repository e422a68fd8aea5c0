// Inner loops: one row per search (`inner_loops`, or a group of seed reruns), its experiments as the loop's
// activities propose, finish and select them, the proposer's batches and the analyst's accounts of them, and what
// the proposer and the gate read back: a campaign's earlier trials, the loss curves of the latest runs, the loop's
// cost, the recipe behind a checkpoint. Every row has a deterministic id, so a retried write changes nothing.
import { and, asc, desc, eq, gte, inArray, isNotNull, lt, ne, sql, type SQL } from 'drizzle-orm';
import { analyses, checkpoints, experiments, innerLoops, metricPoints, proposalBatches, trainingRuns } from '../db/schema';
import type { Queryable } from './queryable';
import { BASELINE_PROPOSER } from '../contracts/experiment';

export type InnerLoop = typeof innerLoops.$inferSelect;
export type NewInnerLoop = typeof innerLoops.$inferInsert;
export type ExperimentRow = typeof experiments.$inferSelect;
export type NewExperiment = typeof experiments.$inferInsert;
export type Analysis = typeof analyses.$inferSelect;
export type NewAnalysis = typeof analyses.$inferInsert;
export type ProposalBatch = typeof proposalBatches.$inferSelect;
export type NewProposalBatch = typeof proposalBatches.$inferInsert;

/** Records the loop (or a seed-rerun group) unless its id is recorded already. */
export async function recordInnerLoop(q: Queryable, row: NewInnerLoop): Promise<void> {
  await q.insert(innerLoops).values(row).onConflictDoNothing();
}

/** Records the loop's end: its status, its best experiment and its summary. */
export async function endInnerLoop(
  q: Queryable,
  id: string,
  end: { status: string; bestExperimentId: string | null; summary: Record<string, unknown>; at: Date },
): Promise<void> {
  await q
    .update(innerLoops)
    .set({ status: end.status, bestExperimentId: end.bestExperimentId, summary: end.summary, updatedAt: end.at })
    .where(eq(innerLoops.id, id));
}

/** The checkpoint the loop's experiments start from: null when they start from scratch, undefined for no such loop. */
export async function baseCheckpointOfLoop(q: Queryable, innerLoopId: string): Promise<string | null | undefined> {
  const [loop] = await q.select({ base: innerLoops.baseCheckpointId }).from(innerLoops).where(eq(innerLoops.id, innerLoopId));
  return loop === undefined ? undefined : loop.base;
}

/** Records the experiments not recorded yet (ON CONFLICT DO NOTHING): a retried proposal writes nothing twice. */
export async function recordExperiments(q: Queryable, rows: NewExperiment[]): Promise<void> {
  if (rows.length > 0) await q.insert(experiments).values(rows).onConflictDoNothing();
}

export async function experimentsByIds(q: Queryable, ids: string[]): Promise<ExperimentRow[]> {
  return ids.length ? q.select().from(experiments).where(inArray(experiments.id, ids)) : [];
}

/** The loop's experiments by index, those with `from <= index < to` where given, in index order. */
export async function loopExperiments(
  q: Queryable,
  innerLoopId: string,
  range: { from?: number; to?: number } = {},
): Promise<ExperimentRow[]> {
  const where: SQL[] = [eq(experiments.innerLoopId, innerLoopId)];
  if (range.from !== undefined) where.push(gte(experiments.index, range.from));
  if (range.to !== undefined) where.push(lt(experiments.index, range.to));
  return q
    .select()
    .from(experiments)
    .where(and(...where))
    .orderBy(asc(experiments.index));
}

/** Records an experiment's end (its first end time kept). */
export async function endExperiment(
  q: Queryable,
  id: string,
  end: { status: string; bestCheckpointId: string | null; error: string | null },
): Promise<void> {
  await q
    .update(experiments)
    .set({ ...end, finishedAt: sql`coalesce(${experiments.finishedAt}, now())` })
    .where(eq(experiments.id, id));
}

/** The loop's best succeeded experiment with a checkpoint, by public score in `mode` (ties: the lower index). */
export async function bestScoredExperiment(q: Queryable, innerLoopId: string, mode: 'min' | 'max'): Promise<ExperimentRow | undefined> {
  const order = mode === 'min' ? asc(experiments.publicScore) : desc(experiments.publicScore);
  const [row] = await q
    .select()
    .from(experiments)
    .where(
      and(
        eq(experiments.innerLoopId, innerLoopId),
        eq(experiments.status, 'succeeded'),
        isNotNull(experiments.publicScore),
        isNotNull(experiments.bestCheckpointId),
      ),
    )
    .orderBy(order, asc(experiments.index))
    .limit(1);
  return row;
}

/** The campaign's trials outside `innerLoopId` (baselines left out), oldest first. */
export async function campaignTrials(
  q: Queryable,
  campaignId: string,
  innerLoopId: string,
): Promise<Pick<ExperimentRow, 'innerLoopId' | 'params' | 'status' | 'publicScore' | 'proposer'>[]> {
  return q
    .select({
      innerLoopId: experiments.innerLoopId,
      params: experiments.params,
      status: experiments.status,
      publicScore: experiments.publicScore,
      proposer: experiments.proposer,
    })
    .from(experiments)
    .where(
      and(eq(experiments.campaignId, campaignId), ne(experiments.innerLoopId, innerLoopId), ne(experiments.proposer, BASELINE_PROPOSER)),
    )
    .orderBy(asc(experiments.createdAt), asc(experiments.innerLoopId), asc(experiments.index));
}

/** The experiment that produced a checkpoint: its id, params and proposer, and the checkpoint's file. */
export async function checkpointExperiment(
  q: Queryable,
  checkpointId: string,
): Promise<{ experimentId: string; params: ExperimentRow['params']; proposer: string; path: string } | undefined> {
  const [row] = await q
    .select({ experimentId: experiments.id, params: experiments.params, proposer: experiments.proposer, path: checkpoints.path })
    .from(checkpoints)
    .innerJoin(experiments, eq(experiments.id, checkpoints.experimentId))
    .where(eq(checkpoints.id, checkpointId));
  return row;
}

/** What the loop's training cost: the trainers' seconds over every run, and how many experiments it has. */
export async function innerLoopCost(q: Queryable, innerLoopId: string): Promise<{ seconds: number; experiments: number }> {
  const [cost] = await q
    .select({
      seconds: sql<number>`coalesce(sum(${trainingRuns.trainerSeconds}), 0)::float8`,
      experiments: sql<number>`count(distinct ${experiments.id})::int`,
    })
    .from(experiments)
    .leftJoin(trainingRuns, eq(trainingRuns.experimentId, experiments.id))
    .where(eq(experiments.innerLoopId, innerLoopId));
  return cost;
}

/** The id of each experiment's last training run (the highest attempt), for the experiments that have one. */
export async function lastRunIds(q: Queryable, experimentIds: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (experimentIds.length === 0) return out;
  const runs = await q
    .select({ id: trainingRuns.id, experimentId: trainingRuns.experimentId, attempt: trainingRuns.attempt })
    .from(trainingRuns)
    .where(inArray(trainingRuns.experimentId, experimentIds));
  const last = new Map<string, { id: string; attempt: number }>();
  for (const r of runs) if ((last.get(r.experimentId)?.attempt ?? -1) < r.attempt) last.set(r.experimentId, r);
  for (const [experimentId, r] of last) out.set(experimentId, r.id);
  return out;
}

/** The `loss` points of the runs, by run, in step order. */
export async function lossPoints(q: Queryable, runIds: string[]): Promise<Map<string, { step: number; value: number }[]>> {
  const byRun = new Map<string, { step: number; value: number }[]>();
  if (runIds.length === 0) return byRun;
  const points = await q
    .select({ runId: metricPoints.runId, step: metricPoints.step, value: metricPoints.value })
    .from(metricPoints)
    .where(and(inArray(metricPoints.runId, runIds), eq(metricPoints.name, 'loss')))
    .orderBy(asc(metricPoints.step));
  for (const p of points) byRun.set(p.runId, [...(byRun.get(p.runId) ?? []), { step: p.step, value: p.value }]);
  return byRun;
}

export async function analysisById(q: Queryable, id: string): Promise<Analysis | undefined> {
  const [row] = await q.select().from(analyses).where(eq(analyses.id, id));
  return row;
}

/** Records the analysis unless its id is recorded already (the first account of a batch wins). */
export async function recordAnalysis(q: Queryable, row: NewAnalysis): Promise<void> {
  await q.insert(analyses).values(row).onConflictDoNothing();
}

/** The texts of the loop's latest `limit` analyses, oldest first. */
export async function recentAnalysisTexts(q: Queryable, innerLoopId: string, limit: number): Promise<string[]> {
  const notes = await q
    .select({ text: analyses.text })
    .from(analyses)
    .where(eq(analyses.innerLoopId, innerLoopId))
    .orderBy(desc(analyses.startIndex))
    .limit(limit);
  return notes.map((n) => n.text).reverse();
}

/** Records the batch unless its id is recorded already. */
export async function recordProposalBatch(q: Queryable, row: NewProposalBatch): Promise<void> {
  await q.insert(proposalBatches).values(row).onConflictDoNothing();
}

/** The loop's recorded batches in start order. */
export async function loopBatches(q: Queryable, innerLoopId: string): Promise<ProposalBatch[]> {
  return q.select().from(proposalBatches).where(eq(proposalBatches.innerLoopId, innerLoopId)).orderBy(asc(proposalBatches.startIndex));
}
