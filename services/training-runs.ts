// Training runs: one row per launch attempt of an experiment (`${experimentId}/r${attempt}`), with the backend's job
// handle, Flywheel's verdict on it (prune, time limit, cancel: stored before the kill), its outcome and what it cost
// in seconds. launchTraining writes a run, awaitTraining follows it to its end, runTraining asks whether it exists.
// A verdict is durable before it acts: a completion lost on the way to Temporal (a restart of the server during the
// kill) makes awaitTraining run again, and that attempt reads the verdict and reports it, instead of finding a killed
// job, calling it "cancelled outside Flywheel" and having the experiment relaunch it.
import { and, eq, sql } from 'drizzle-orm';
import type { JobHandle } from '../contracts/job-handle';
import type { RunVerdict } from '../contracts/training';
import { capacitySlots, checkpoints, costLedger, experiments, trainingRuns } from '../db/schema';
import { slotRelease } from './capacity';
import type { NewCheckpoint } from './checkpoints';
import type { NewLedgerRow } from './cost-ledger';
import type { Queryable } from './queryable';

/** A launched run, as launchTraining records it. */
export interface LaunchedRun {
  id: string;
  experimentId: string;
  attempt: number;
  backend: string;
  handle: JobHandle;
  runDir: string;
}

/** When a run was launched, and the verdict an earlier attempt stored (awaitTraining starts from both). */
export interface RunStart {
  startedAt: Date;
  verdict: RunVerdict | null;
}

/**
 * Records a launch as running, with the wait of the capacity slot the run holds (null: it launched without one), and
 * marks its experiment running from its first launch, in one statement. A retried launch (the backend returned the
 * job it had started) updates only the handle: the run's start, status and wait stay the first launch's. Returns the
 * run's start and stored verdict.
 */
export async function recordLaunch(q: Queryable, run: LaunchedRun): Promise<RunStart> {
  const running = q.$with('running').as(
    q
      .update(experiments)
      .set({ status: 'running', startedAt: sql`coalesce(${experiments.startedAt}, now())` })
      .where(eq(experiments.id, run.experimentId))
      .returning({ id: experiments.id }),
  );
  const waited = q.select({ waited: capacitySlots.waitedSeconds }).from(capacitySlots).where(eq(capacitySlots.runId, run.id));
  const [row] = await q
    .with(running)
    .insert(trainingRuns)
    .values({ ...run, status: 'running', capacityWaitSeconds: sql`(${waited})` })
    .onConflictDoUpdate({ target: trainingRuns.id, set: { handle: run.handle } })
    .returning({ startedAt: trainingRuns.startedAt, verdict: trainingRuns.verdict });
  return row;
}

/** When the run was launched, and the verdict an earlier attempt stored; undefined when there is no such run. */
export async function runStart(q: Queryable, runId: string): Promise<RunStart | undefined> {
  const [run] = await q
    .select({ startedAt: trainingRuns.startedAt, verdict: trainingRuns.verdict })
    .from(trainingRuns)
    .where(eq(trainingRuns.id, runId));
  return run;
}

/** The verdict stored on the run, if any. */
export async function verdictOf(q: Queryable, runId: string): Promise<RunVerdict | undefined> {
  const [row] = await q.select({ verdict: trainingRuns.verdict }).from(trainingRuns).where(eq(trainingRuns.id, runId));
  return row?.verdict ?? undefined;
}

/** Stores the verdict before the kill; a verdict already stored (an earlier attempt's) wins and is returned. */
export async function decideRun(q: Queryable, runId: string, verdict: RunVerdict): Promise<RunVerdict> {
  const earlier = await verdictOf(q, runId);
  if (earlier) return earlier;
  await q.update(trainingRuns).set({ verdict }).where(eq(trainingRuns.id, runId));
  return verdict;
}

/** How a run ended, as awaitTraining records it. */
export interface RunEnd {
  status: string;
  exitCode: number | null;
  stderrTail: string | null;
  trainerSeconds: number | null;
  /** Launches the backend recorded in the run's launch directory. */
  launches: number;
  endedAt: Date;
}

/** What a run's end writes besides the run's row, in the same statement (runTraining: one round trip, where there were four). */
export interface RunEndWrites {
  /** A succeeded run's checkpoints (one recorded already, by an earlier try, is left as it is). */
  checkpoints?: NewCheckpoint[];
  /** The run's ledger row, when its caller priced it (trainingCostRow; written once: its id is the run's). */
  cost?: NewLedgerRow;
  /** Frees the run's capacity slot and wakes the waiters, as releaseSlot does. */
  releaseSlot?: boolean;
}

/**
 * Records how the run ended, and `writes` with it; returns what pricing it needs. Undefined when there is no such run:
 * then nothing is written but a slot asked to be freed, whose waiters are not woken (they find it at their next
 * re-check); runTraining never asks without the run's row, which its launch wrote.
 */
export async function recordRunEnd(q: Queryable, runId: string, end: RunEnd, writes: RunEndWrites = {}): Promise<RunCostBasis | undefined> {
  const { checkpoints: rows = [], cost, releaseSlot: release } = writes;
  const ctes = [
    ...(rows.length > 0
      ? [q.$with('recorded_checkpoints').as(q.insert(checkpoints).values(rows).onConflictDoNothing().returning({ id: checkpoints.id }))]
      : []),
    ...(cost
      ? [q.$with('recorded_cost').as(q.insert(costLedger).values(cost).onConflictDoNothing().returning({ id: costLedger.id }))]
      : []),
  ];
  // Data-modifying CTEs run whether or not the statement reads them; the release's NOTIFY is read in RETURNING.
  const { gone, notifyWaiters } = slotRelease(q, runId);
  const [row] = await q
    .with(...ctes, ...(release ? [gone] : []))
    .update(trainingRuns)
    .set(end)
    .from(experiments)
    .where(and(eq(trainingRuns.id, runId), eq(experiments.id, trainingRuns.experimentId)))
    .returning({
      ...costBasisColumns,
      ...(release ? { notified: notifyWaiters } : {}),
    });
  if (!row) return undefined;
  const { id, campaignId, campaignVersionId, startedAt, endedAt } = row;
  return { id, campaignId, campaignVersionId, startedAt, endedAt };
}

/** Its workflow cancelled the run: the job was stopped at `at`. */
export async function markRunCancelled(q: Queryable, runId: string, at: Date): Promise<void> {
  await q.update(trainingRuns).set({ status: 'cancelled', endedAt: at }).where(eq(trainingRuns.id, runId));
}

/** What pricing a run needs: its experiment's campaign (and pinned version) and the run's launch-to-end span. */
export interface RunCostBasis {
  id: string;
  campaignId: string;
  campaignVersionId: string | null;
  startedAt: Date;
  endedAt: Date | null;
}

/** The run's experiment (id, campaign, version) with the run's start and end, in one statement; undefined if absent. */
export async function runCostBasis(q: Queryable, runId: string): Promise<RunCostBasis | undefined> {
  const [row] = await q
    .select(costBasisColumns)
    .from(trainingRuns)
    .innerJoin(experiments, eq(experiments.id, trainingRuns.experimentId))
    .where(eq(trainingRuns.id, runId));
  return row;
}

/** What pricing a run reads: its experiment's id, campaign and version, and the run's start and end. */
const costBasisColumns = {
  id: experiments.id,
  campaignId: experiments.campaignId,
  campaignVersionId: experiments.campaignVersionId,
  startedAt: trainingRuns.startedAt,
  endedAt: trainingRuns.endedAt,
};
