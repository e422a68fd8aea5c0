// promotionEvidence: what a researcher sees before approving a promotion: the gate's checks, the held-out change
// per category (means only: held-out items and per-item scores never leave the database), what the iteration's
// inner loop cost, and how the candidate's configuration differs from production's.
import { higherIsBetter, itemsOfMetric } from '../../core/eval-suite/suite-metrics';
import { pairedMetricsOf } from '../../core/gate/checks';
import type { GateMetric } from '../../core/gate/settings';
import { gateDecisionById } from '../../services/decisions';
import { itemCategories } from '../../services/suites/suite-items';
import { logHeldoutRead } from '../../services/suites/heldout-items';
import { splitScores } from '../../services/eval-results';
import { checkpointExperiment, innerLoopCost } from '../../services/inner-loops';
import type { PromotionEvidence } from '../../contracts/outer-loop';
import type { ActivityDeps } from '../deps';
import type { PromotionEvidenceInput } from '../../contracts/outer-activities';

export async function promotionEvidence(deps: ActivityDeps, input: PromotionEvidenceInput): Promise<PromotionEvidence> {
  const { db } = deps;
  const decision = await gateDecisionById(db, input.decisionId);
  const checks = Object.entries(decision?.figures.checks ?? {}).map(([rule, c]) => ({ rule, passed: c.passed, reason: c.reason }));

  const heldout = async (ckpt: string) => (await splitScores(db, ckpt, input.suiteId, 'heldout'))?.perItem ?? {};
  const [cand, inc] = [await heldout(input.candidateCheckpointId), await heldout(input.incumbentCheckpointId)];
  const items = await itemCategories(db, input.suiteId, ['heldout']);
  await logHeldoutRead(db, input.suiteId, `promotionEvidence:${input.outerIterationId}`, 'approval-evidence');
  // The metrics the gate paired (its recorded metric, core/gate/checks pairedMetricsOf), per category.
  const gateMetric = decision?.figures.settings?.metric ?? 'bits_per_byte';
  const selectors = pairedMetricsOf(gateMetric).flatMap((metric) => {
    const selects = itemsOfMetric(metric);
    return selects ? [{ metric, selects }] : [];
  });
  const sums = new Map<string, { metric: GateMetric; category: string; sum: number; items: number }>();
  for (const i of items) {
    const [c, b] = [cand[i.id], inc[i.id]];
    if (c === undefined || b === undefined) continue;
    for (const { metric } of selectors.filter((s) => s.selects(i))) {
      const key = `${metric}\u0000${i.category}`;
      const s = sums.get(key) ?? { metric, category: i.category, sum: 0, items: 0 };
      s.sum += higherIsBetter(metric) ? c - b : b - c;
      s.items++;
      sums.set(key, s);
    }
  }
  const categoryDeltas = [...sums.values()]
    .map((s) => ({ metric: s.metric, category: s.category, delta: Math.round((s.sum / s.items) * 1e4) / 1e4, items: s.items }))
    .sort((a, b) => (a.metric + a.category < b.metric + b.category ? -1 : 1));

  const cost = await innerLoopCost(db, input.innerLoopId);

  const paramsOf = async (ckpt: string): Promise<Record<string, unknown>> => (await checkpointExperiment(db, ckpt))?.params ?? {};
  const [pc, pi] = [await paramsOf(input.candidateCheckpointId), await paramsOf(input.incumbentCheckpointId)];
  const configDiff = [...new Set([...Object.keys(pc), ...Object.keys(pi)])]
    .sort()
    .filter((k) => JSON.stringify(pc[k]) !== JSON.stringify(pi[k]))
    .map((k): [string, unknown, unknown] => [k, pi[k] ?? null, pc[k] ?? null]);

  return {
    outerIterationId: input.outerIterationId,
    candidateCheckpointId: input.candidateCheckpointId,
    incumbentCheckpointId: input.incumbentCheckpointId,
    gate: {
      promote: decision?.kind === 'promote',
      rule: decision?.rule ?? 'unknown',
      reason: decision?.reason ?? 'no gate decision recorded',
      checks,
    },
    categoryDeltas,
    cost: { trainerSeconds: Math.round(cost.seconds * 10) / 10, experiments: cost.experiments },
    configDiff,
    deadline: input.deadline,
    defaultDecision: input.defaultDecision,
  };
}
