// Training curves: the metric points of a few experiments' runs, thinned in SQL to at most `maxPoints` per run so
// a page stays small however long the runs were.
import { and, count, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { metricPoints, trainingRuns } from '../../db/schema';

/** The metric names logged by these experiments' runs, most common first. */
export async function metricNames(db: Db, experimentIds: string[]): Promise<string[]> {
  if (!experimentIds.length) return [];
  // Each run's distinct names (a lateral subquery), counted over the runs.
  const m = db.selectDistinct({ name: metricPoints.name }).from(metricPoints).where(eq(metricPoints.runId, trainingRuns.id)).as('m');
  const r = await db
    .select({ name: m.name })
    .from(trainingRuns)
    .innerJoinLateral(m, sql`true`)
    .where(inArray(trainingRuns.experimentId, experimentIds))
    .groupBy(m.name)
    .orderBy(desc(count()), m.name);
  return r.map((x) => x.name);
}

/** One series per run (named by its experiment, and attempt when there were several). */
export async function curves(db: Db, experimentIds: string[], metric: string, maxPoints = 200): Promise<Series[]> {
  if (!experimentIds.length) return [];
  // Every point of the runs numbered from each end; the thinning keeps every ceil(n / maxPoints)-th and the last.
  const t = db
    .select({
      run_id: metricPoints.runId,
      experiment_id: trainingRuns.experimentId,
      attempt: trainingRuns.attempt,
      step: metricPoints.step,
      value: metricPoints.value,
      back: sql<number>`row_number() OVER (PARTITION BY ${metricPoints.runId} ORDER BY ${metricPoints.step} DESC)`.as('back'),
      n: sql<number>`count(*) OVER (PARTITION BY ${metricPoints.runId})`.as('n'),
      k: sql<number>`row_number() OVER (PARTITION BY ${metricPoints.runId} ORDER BY ${metricPoints.step})`.as('k'),
    })
    .from(trainingRuns)
    .innerJoin(metricPoints, and(eq(metricPoints.runId, trainingRuns.id), eq(metricPoints.name, metric)))
    .where(inArray(trainingRuns.experimentId, experimentIds))
    .as('t');
  const r = await db
    .select({
      experiment_id: t.experiment_id,
      attempt: t.attempt,
      steps: sql<number[]>`array_agg(${t.step} ORDER BY ${t.step})`,
      vals: sql<number[]>`array_agg(${t.value} ORDER BY ${t.step})`,
    })
    .from(t)
    .where(or(eq(t.back, 1), sql`(${t.k} - 1) % greatest(1, ceil(${t.n}::float8 / ${maxPoints})::int) = 0`))
    .groupBy(t.run_id, t.experiment_id, t.attempt)
    .orderBy(t.experiment_id, t.attempt);
  const attempts = new Map<string, number>();
  for (const x of r) attempts.set(x.experiment_id, (attempts.get(x.experiment_id) ?? 0) + 1);
  return r.map((x) => ({
    name: attempts.get(x.experiment_id)! > 1 ? `${x.experiment_id} (attempt ${x.attempt})` : x.experiment_id,
    points: x.steps.map((s, i) => [s, x.vals[i]] as [number, number]),
  }));
}

/**
 * The same curves against tokens seen, or the trainer's wall-clock (time between logged points from the `tokens`
 * and `tokens_per_s` metrics of the job contract). A run that logs neither is left out of those axes.
 */
export async function curvesOnAxis(
  db: Db,
  experimentIds: string[],
  metric: string,
  axis: 'step' | 'tokens' | 'time',
  maxPoints = 200,
): Promise<Series[]> {
  const ys = await curves(db, experimentIds, metric, maxPoints);
  if (axis === 'step') return ys;
  const tokens = new Map((await curves(db, experimentIds, 'tokens', maxPoints)).map((s) => [s.name, new Map(s.points)]));
  const rates =
    axis === 'time'
      ? new Map((await curves(db, experimentIds, 'tokens_per_s', maxPoints)).map((s) => [s.name, new Map(s.points)]))
      : undefined;
  const out: Series[] = [];
  for (const s of ys) {
    const tok = tokens.get(s.name);
    if (!tok) continue;
    const points: Array<[number, number]> = [];
    let t = 0;
    let prevTokens = 0;
    for (const [step, y] of s.points) {
      const n = tok.get(step);
      if (n === undefined) continue;
      if (rates) {
        const r = rates.get(s.name)?.get(step);
        if (!r || !(r > 0)) continue;
        t += (n - prevTokens) / r;
        prevTokens = n;
        points.push([Math.round(t * 100) / 100, y]);
      } else {
        points.push([n, y]);
      }
    }
    if (points.length) out.push({ name: s.name, points });
  }
  return out;
}

export interface Series {
  name: string;
  points: Array<[x: number, y: number]>;
}
