// The campaign's cost ledger: one row per source (a training run's GPU time, an agent call's tokens), priced when
// written, under an id derived from its source so a retried writer adds nothing. `checkBudget` is the hard cap, asked
// before every training launch and every agent call.
import { eq, sum } from 'drizzle-orm';
import { BudgetExceededError } from '../core/errors';
import { gpuHourPrice, gpusPerJob, type CampaignSpec } from '../core/spec';
import { costLedger } from '../db/schema';
import type { Queryable } from './queryable';

export type NewLedgerRow = typeof costLedger.$inferInsert;

/** The campaign's spend so far in USD: the sum of its ledger. */
export async function campaignSpend(q: Queryable, campaignId: string): Promise<number> {
  const [row] = await q
    .select({ usd: sum(costLedger.amountUsd).mapWith(Number) })
    .from(costLedger)
    .where(eq(costLedger.campaignId, campaignId));
  return row?.usd ?? 0;
}

/** Throws BudgetExceededError when the campaign has spent `budget.maxCostUsd` or more; returns the spend otherwise. */
export async function checkBudget(q: Queryable, campaignId: string, spec: CampaignSpec): Promise<number> {
  return refuseOverBudget(campaignId, await campaignSpend(q, campaignId), spec);
}

/** checkBudget on a spend already read (launchTraining reads it with the rest of what it needs). */
export function refuseOverBudget(campaignId: string, spent: number, spec: CampaignSpec): number {
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
export async function recordTrainingCost(q: Queryable, spec: CampaignSpec, cost: TrainingCost): Promise<void> {
  await q.insert(costLedger).values(trainingCostRow(spec, cost)).onConflictDoNothing();
}

/** The run's `${runId}/gpu` row as recordTrainingCost writes it (recordRunEnd writes it with the run's end). */
export function trainingCostRow(spec: CampaignSpec, cost: TrainingCost): NewLedgerRow {
  const gpuSeconds = cost.seconds * gpusPerJob(spec);
  const price = gpuHourPrice(spec);
  return {
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
  };
}

export interface TokenCost {
  /** The agent call's id: the row is `${callId}/tokens`. */
  callId: string;
  campaignId: string;
  /** The model endpoint's model name. */
  model: string;
  tokensIn: number;
  tokensOut: number;
  /** USD per million tokens, in and out (the spec's `agents.usdPerMillionTokens`). */
  usdPerMillion: { input: number; output: number };
}

/** What a call's tokens cost in USD at the given prices. */
export function tokenCostUsd(c: Pick<TokenCost, 'tokensIn' | 'tokensOut' | 'usdPerMillion'>): number {
  return (c.tokensIn * c.usdPerMillion.input + c.tokensOut * c.usdPerMillion.output) / 1e6;
}

/** Writes the call's `${callId}/tokens` row once: a retried writer adds nothing. */
export async function recordTokenCost(q: Queryable, cost: TokenCost): Promise<void> {
  const { input, output } = cost.usdPerMillion;
  await q
    .insert(costLedger)
    .values({
      id: `${cost.callId}/tokens`,
      campaignId: cost.campaignId,
      kind: 'tokens',
      backend: cost.model,
      quantity: cost.tokensIn + cost.tokensOut,
      unitPriceUsd: (input + output) / 2e6,
      amountUsd: tokenCostUsd(cost),
      sourceId: cost.callId,
    })
    .onConflictDoNothing();
}
