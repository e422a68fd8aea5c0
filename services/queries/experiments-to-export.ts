// What `flywheel export mlflow` sends of a campaign's experiments, read in four queries: the experiment rows, their
// training curves, their PUBLIC eval results (the metrics only: never per-item outcomes, outputs or held-out and test
// rows) and the decisions that name them (kind, verdict and rule: never the reason or figures, which quote held-out
// scores). The held-out score column is not read.
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { decisions, evalResults, experiments, metricPoints, trainingRuns } from '../../db/schema';

export interface ExperimentToExport {
  id: string;
  innerLoopId: string;
  index: number;
  campaignVersionId: string | null;
  datasetVersionId: string;
  params: Record<string, unknown>;
  hypothesis: string;
  proposer: string;
  /** proposed | running | succeeded | pruned | failed | cancelled */
  status: string;
  publicScore: number | null;
  /** When it started (or was proposed): every metric point's timestamp, so a re-export logs the very same points. */
  at: Date;
  finishedAt: Date | null;
  /** The public split's suite and metrics of its best checkpoint (else its latest public result). */
  publicEval: { suiteId: string; metrics: Record<string, number> } | null;
  /** Training metrics by step, from its last attempt that logged the metric. */
  curves: { name: string; step: number; value: number }[];
  /** Decisions naming it, oldest first: select, promote, reject or hold, and whether it was accepted. */
  decisions: { kind: string; accepted: boolean; rule: string }[];
}

export async function experimentsToExport(db: Db, campaignId: string): Promise<ExperimentToExport[]> {
  const rows = await db
    .select({
      id: experiments.id,
      innerLoopId: experiments.innerLoopId,
      index: experiments.index,
      campaignVersionId: experiments.campaignVersionId,
      datasetVersionId: experiments.datasetVersionId,
      params: experiments.params,
      hypothesis: experiments.hypothesis,
      proposer: experiments.proposer,
      status: experiments.status,
      publicScore: experiments.publicScore,
      bestCheckpointId: experiments.bestCheckpointId,
      startedAt: experiments.startedAt,
      createdAt: experiments.createdAt,
      finishedAt: experiments.finishedAt,
    })
    .from(experiments)
    .where(eq(experiments.campaignId, campaignId))
    .orderBy(asc(experiments.createdAt), asc(experiments.id));
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [points, evals, made] = await Promise.all([
    db
      .select({
        experimentId: trainingRuns.experimentId,
        attempt: trainingRuns.attempt,
        name: metricPoints.name,
        step: metricPoints.step,
        value: metricPoints.value,
      })
      .from(metricPoints)
      .innerJoin(trainingRuns, eq(trainingRuns.id, metricPoints.runId))
      .where(inArray(trainingRuns.experimentId, ids))
      .orderBy(asc(trainingRuns.attempt), asc(metricPoints.step)),
    db
      .select({
        experimentId: evalResults.experimentId,
        checkpointId: evalResults.checkpointId,
        suiteId: evalResults.suiteId,
        metrics: evalResults.metrics,
      })
      .from(evalResults)
      .where(and(inArray(evalResults.experimentId, ids), eq(evalResults.split, 'public')))
      .orderBy(asc(evalResults.createdAt)),
    db
      .select({ experimentId: decisions.experimentId, kind: decisions.kind, accepted: decisions.accepted, rule: decisions.rule })
      .from(decisions)
      .where(inArray(decisions.experimentId, ids))
      .orderBy(asc(decisions.createdAt), asc(decisions.id)),
  ]);
  return rows.map((r) => {
    // A later attempt's point at the same step replaces an earlier one's (a relaunch logs its steps again).
    const curve = new Map<string, { name: string; step: number; value: number }>();
    for (const p of points) if (p.experimentId === r.id) curve.set(`${p.name}\0${p.step}`, { name: p.name, step: p.step, value: p.value });
    const mine = evals.filter((e) => e.experimentId === r.id);
    const best = mine.find((e) => e.checkpointId === r.bestCheckpointId) ?? mine.at(-1);
    return {
      id: r.id,
      innerLoopId: r.innerLoopId,
      index: r.index,
      campaignVersionId: r.campaignVersionId,
      datasetVersionId: r.datasetVersionId,
      params: r.params as Record<string, unknown>,
      hypothesis: r.hypothesis,
      proposer: r.proposer,
      status: r.status,
      publicScore: r.publicScore,
      at: r.startedAt ?? r.createdAt,
      finishedAt: r.finishedAt,
      publicEval: best ? { suiteId: best.suiteId, metrics: best.metrics } : null,
      curves: [...curve.values()],
      decisions: made.filter((d) => d.experimentId === r.id).map(({ kind, accepted, rule }) => ({ kind, accepted, rule })),
    };
  });
}
