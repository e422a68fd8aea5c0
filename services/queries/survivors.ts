// "Survivors per 100 experiments": how many of a campaign's experiments became production models — promotions per
// 100 experiments run. The search's experiments only: the untrained baselines and the gate's seed reruns train no
// candidate, so they are not counted (core/gate/noise-check.ts SEED_RERUN_PROPOSER).
import type { Db } from '../../db/client';
import { SEED_RERUN_PROPOSER } from '../../core/gate/noise-check';
import { one } from './run-query';

export interface Survivors {
  /** Experiments of the search that ran to an end (succeeded, pruned, failed or timed out). */
  experiments: number;
  /** Outer iterations that promoted their candidate. */
  promotions: number;
  /** promotions × 100 / experiments; null before any experiment ran. */
  per100: number | null;
}

export async function survivorsOf(db: Db, campaignId: string): Promise<Survivors> {
  const r = await one<{ experiments: number; promotions: number }>(
    db,
    `SELECT
       (SELECT count(*)::int FROM experiments WHERE campaign_id = $1 AND proposer NOT IN ('baseline', $2)
          AND status IN ('succeeded', 'pruned', 'failed', 'timed_out')) AS experiments,
       (SELECT count(*)::int FROM outer_iterations WHERE campaign_id = $1 AND status = 'promoted') AS promotions`,
    [campaignId, SEED_RERUN_PROPOSER],
  );
  const experiments = r?.experiments ?? 0;
  const promotions = r?.promotions ?? 0;
  return { experiments, promotions, per100: experiments > 0 ? Math.round((promotions * 10000) / experiments) / 100 : null };
}

/** One line for the report, `flywheel status` and the dashboard. */
export function survivorsLine(s: Survivors): string {
  if (s.per100 === null) return 'survivors per 100 experiments: - (no experiment has run)';
  return `survivors per 100 experiments: ${s.per100} (${s.promotions} promoted of ${s.experiments} experiments run)`;
}
