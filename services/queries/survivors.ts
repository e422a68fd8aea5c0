// "Survivors per 100 experiments": how many of a campaign's experiments became production models — promotions per
// 100 experiments run. The search's experiments only: the untrained baselines and the gate's seed reruns train no
// candidate, so they are not counted (core/gate/noise-check.ts SEED_RERUN_PROPOSER).
import { and, count, eq, inArray, notInArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { experiments as experimentsTable, outerIterations } from '../../db/schema';
import { SEED_RERUN_PROPOSER } from '../../core/gate/noise-check';
import { BASELINE_PROPOSER } from '../../contracts/experiment';

export interface Survivors {
  /** Experiments of the search that ran to an end (succeeded, pruned, failed or timed out). */
  experiments: number;
  /** Outer iterations that promoted their candidate. */
  promotions: number;
  /** promotions × 100 / experiments; null before any experiment ran. */
  per100: number | null;
}

export async function survivorsOf(db: Db, campaignId: string): Promise<Survivors> {
  const [[e], [o]] = await Promise.all([
    db
      .select({ n: count() })
      .from(experimentsTable)
      .where(
        and(
          eq(experimentsTable.campaignId, campaignId),
          notInArray(experimentsTable.proposer, [BASELINE_PROPOSER, SEED_RERUN_PROPOSER]),
          inArray(experimentsTable.status, ['succeeded', 'pruned', 'failed', 'timed_out']),
        ),
      ),
    db
      .select({ n: count() })
      .from(outerIterations)
      .where(and(eq(outerIterations.campaignId, campaignId), eq(outerIterations.status, 'promoted'))),
  ]);
  const experiments = e?.n ?? 0;
  const promotions = o?.n ?? 0;
  return { experiments, promotions, per100: experiments > 0 ? Math.round((promotions * 10000) / experiments) / 100 : null };
}

/** One line for the report, `flywheel status` and the dashboard. */
export function survivorsLine(s: Survivors): string {
  if (s.per100 === null) return 'survivors per 100 experiments: - (no experiment has run)';
  return `survivors per 100 experiments: ${s.per100} (${s.promotions} promoted of ${s.experiments} experiments run)`;
}
