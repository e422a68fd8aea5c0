// Flywheel's own decisions about a running job (prune, time limit, cancel), made durable before they act: the
// verdict is stored on the run's row, then the job is killed. A completion lost on the way to Temporal (a restart
// of the server during the kill) makes awaitTraining run again; that attempt reads the verdict and reports it,
// instead of finding a killed job, calling it "cancelled outside Flywheel" and having the experiment relaunch it.
// In PostgreSQL, not the run directory: the trainer (untrusted code) can write there.
import { eq } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { trainingRuns } from '../../db/schema';

export interface RunVerdict {
  status: 'pruned' | 'timed_out' | 'cancelled';
  /** The step the decision was taken at, when there was one. */
  lastStep?: number;
  /** Why, in one line: what the run's outcome reports as its error. */
  error: string;
}

/** Stores the verdict before the kill; a verdict already stored (an earlier attempt's) wins and is returned. */
export async function decideRun(db: Db, runId: string, verdict: RunVerdict): Promise<RunVerdict> {
  const earlier = await verdictOf(db, runId);
  if (earlier) return earlier;
  await db.update(trainingRuns).set({ verdict }).where(eq(trainingRuns.id, runId));
  return verdict;
}

export async function verdictOf(db: Db, runId: string): Promise<RunVerdict | undefined> {
  const [row] = await db.select({ verdict: trainingRuns.verdict }).from(trainingRuns).where(eq(trainingRuns.id, runId));
  return (row?.verdict as RunVerdict | null) ?? undefined;
}
