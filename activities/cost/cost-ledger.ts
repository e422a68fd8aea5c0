// The campaign's cost ledger: one row per source (a training run's GPU time, an agent call's tokens), priced when
// written. `checkBudget` is the hard cap, asked before every training launch and every agent call.
import { eq, sql } from 'drizzle-orm';
import { BudgetExceededError } from '../../core/errors';
import { gpuHourPrice, gpusPerJob, type CampaignSpec } from '../../core/spec';
import type { Db } from '../../db/client';
import { costLedger } from '../../db/schema';

/** The campaign's spend so far in USD: the sum of its ledger. */
export async function campaignSpend(db: Db, campaignId: string): Promise<number> {
  const [row] = await db
    .select({ usd: sql<number>`coalesce(sum(${costLedger.amountUsd}), 0)::float8` })
    .from(costLedger)
    .where(eq(costLedger.campaignId, campaignId));
  return row.usd;
}

/** Throws BudgetExceededError when the campaign has spent `budget.maxCostUsd` or more; returns the spend otherwise. */
export async function checkBudget(db: Db, campaignId: string, spec: CampaignSpec): Promise<number> {
  const spent = await campaignSpend(db, campaignId);
  const cap = spec.budget.maxCostUsd;
  if (cap !== undefined && spent >= cap) {
    throw new BudgetExceededError(
      `campaign "${campaignId}" has spent $${spent.toFixed(4)} of its $${cap.toFixed(4)} budget (budget.maxCostUsd)`,
    );
  }
  return spent;
}

export interface TrainingCost {
  runId: string;
  campaignId: string;
  backend: string;
  /** Seconds the trainer ran. */
  seconds: number;
  /** CPUs the job was given (Slurm's nodes × cpusPerTask); unknown for a local process, so no CPU-seconds. */
  cpus?: number;
}

/**
 * Writes the run's `${runId}/gpu` row: seconds × GPUs per job, at the GPU type's price per hour. A retried
 * awaitTraining writes nothing new (the id is the run's); a CPU-only job is a $0 row with its CPU-seconds.
 */
export async function recordTrainingCost(db: Db, spec: CampaignSpec, cost: TrainingCost): Promise<void> {
  const gpuSeconds = cost.seconds * gpusPerJob(spec);
  const price = gpuHourPrice(spec);
  await db
    .insert(costLedger)
    .values({
      id: `${cost.runId}/gpu`,
      campaignId: cost.campaignId,
      kind: 'gpu',
      backend: cost.backend,
      gpuType: spec.budget.gpuType,
      quantity: gpuSeconds,
      unitPriceUsd: price,
      amountUsd: (gpuSeconds / 3600) * price,
      cpuSeconds: cost.cpus === undefined ? null : cost.seconds * cost.cpus,
      sourceId: cost.runId,
    })
    .onConflictDoNothing();
}
