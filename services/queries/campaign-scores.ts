// What `flywheel campaigns` shows beside each campaign's counts: its production model's held-out score (the gate's
// metric, as the latest outer iteration recorded it), its sealed test score (services/queries/sealed-test.ts) and the
// last gate decision. Scores only, from the iterations' summaries and the decisions: no eval item is read.
import type { Db } from '../../db/client';
import { lastGateDecisionOf } from './decisions';
import { outerIterationsOf } from './outer-iterations';
import { sealedTestOf } from './sealed-test';

export interface CampaignScores {
  /** The held-out metric (the gate's), when an iteration measured production on it. */
  heldout_metric: string | null;
  heldout_production: number | null;
  test_metric: string | null;
  test_production: number | null;
  /** The latest gate decision: its kind (`promote`, `reject`, `hold`), the rule that decided it and when. */
  last_gate: { kind: string; rule: string; at: Date } | null;
}

export async function campaignScoresOf(db: Db, campaignId: string): Promise<CampaignScores> {
  const [rows, gate] = await Promise.all([outerIterationsOf(db, campaignId), lastGateDecisionOf(db, campaignId)]);
  const heldout = rows.filter((r) => r.heldout_production !== null).at(-1);
  const test = sealedTestOf(rows);
  return {
    heldout_metric: heldout?.heldout_metric ?? null,
    heldout_production: heldout?.heldout_production ?? null,
    test_metric: test.metric ?? null,
    test_production: test.production ?? null,
    last_gate: gate ? { kind: gate.kind, rule: gate.rule, at: gate.created_at } : null,
  };
}
