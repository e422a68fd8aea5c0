// promotionEvidence: what a researcher sees before approving a promotion: the gate's checks, the held-out change
// per category (means only: held-out items and per-item scores never leave the database), what the iteration's
// inner loop cost, and how the candidate's configuration differs from production's.
import { and, eq, sql } from 'drizzle-orm';
import { higherIsBetter, itemsOfMetric } from '../../core/eval-suite/suite-metrics';
import { pairedMetricsOf } from '../../core/gate/checks';
import type { GateMetric } from '../../core/gate/settings';
import { checkpoints, decisions, evalItems, evalResults, experiments, heldoutReads, trainingRuns } from '../../db/schema';
import type { PromotionEvidence } from '../../contracts/outer-loop';
import type { ActivityDeps } from '../deps';
import type { PromotionEvidenceInput } from '../../contracts/outer-activities';

export async function promotionEvidence(deps: ActivityDeps, input: PromotionEvidenceInput): Promise<PromotionEvidence> {
  const { db } = deps;
  const [decision] = await db.select().from(decisions).where(eq(decisions.id, input.decisionId));
  const checks = Object.entries((decision?.figures as { checks?: Record<string, { passed: boolean; reason: string }> })?.checks ?? {}).map(
    ([rule, c]) => ({ rule, passed: c.passed, reason: c.reason }),
  );

  const heldout = async (ckpt: string) =>
    (
      await db
        .select({ perItem: evalResults.perItem })
        .from(evalResults)
        .where(eq(evalResults.id, `${ckpt}|${input.suiteId}|heldout`))
    )[0]?.perItem ?? {};
  const [cand, inc] = [await heldout(input.candidateCheckpointId), await heldout(input.incumbentCheckpointId)];
  const items = await db
    .select({ id: evalItems.id, grader: evalItems.grader, category: evalItems.category })
    .from(evalItems)
    .where(and(eq(evalItems.suiteId, input.suiteId), eq(evalItems.split, 'heldout')));
  await db
    .insert(heldoutReads)
    .values({ suiteId: input.suiteId, reader: `promotionEvidence:${input.outerIterationId}`, purpose: 'approval-evidence' });
  // The metrics the gate paired (its recorded metric, core/gate/checks pairedMetricsOf), per category.
  const gateMetric = (decision?.figures as { settings?: { metric?: string } } | undefined)?.settings?.metric ?? 'bits_per_byte';
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

  const [cost] = await db
    .select({
      seconds: sql<number>`coalesce(sum(${trainingRuns.trainerSeconds}), 0)::float8`,
      experiments: sql<number>`count(distinct ${experiments.id})::int`,
    })
    .from(experiments)
    .leftJoin(trainingRuns, eq(trainingRuns.experimentId, experiments.id))
    .where(eq(experiments.innerLoopId, input.innerLoopId));

  const paramsOf = async (ckpt: string) => {
    const [row] = await db
      .select({ params: experiments.params })
      .from(checkpoints)
      .innerJoin(experiments, eq(experiments.id, checkpoints.experimentId))
      .where(eq(checkpoints.id, ckpt));
    return (row?.params ?? {}) as Record<string, unknown>;
  };
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
