// Training curves: the metric points of a few experiments' runs, thinned in SQL to at most `maxPoints` per run so
// a page stays small however long the runs were.
import type { Db } from '../../db/client';
import { rows } from './run-query';

/** The metric names logged by these experiments' runs, most common first. */
export async function metricNames(db: Db, experimentIds: string[]): Promise<string[]> {
  if (!experimentIds.length) return [];
  const r = await rows<{ name: string }>(
    db,
    `SELECT m.name FROM training_runs r JOIN LATERAL (SELECT DISTINCT name FROM metric_points WHERE run_id = r.id) m ON true
     WHERE r.experiment_id = ANY($1) GROUP BY m.name ORDER BY count(*) DESC, m.name`,
    [experimentIds],
  );
  return r.map((x) => x.name);
}

/** One series per run (named by its experiment, and attempt when there were several). */
export async function curves(db: Db, experimentIds: string[], metric: string, maxPoints = 200): Promise<Series[]> {
  if (!experimentIds.length) return [];
  const r = await rows<{ run_id: string; experiment_id: string; attempt: number; steps: number[]; vals: number[] }>(
    db,
    `SELECT run_id, experiment_id, attempt, array_agg(step ORDER BY step) AS steps, array_agg(value ORDER BY step) AS vals FROM (
       SELECT m.run_id, r.experiment_id, r.attempt, m.step, m.value,
         row_number() OVER (PARTITION BY m.run_id ORDER BY m.step DESC) AS back, count(*) OVER (PARTITION BY m.run_id) AS n,
         row_number() OVER (PARTITION BY m.run_id ORDER BY m.step) AS k
       FROM training_runs r JOIN metric_points m ON m.run_id = r.id AND m.name = $2
       WHERE r.experiment_id = ANY($1)) t
     WHERE back = 1 OR (k - 1) % greatest(1, ceil(n::float8 / $3)::int) = 0
     GROUP BY run_id, experiment_id, attempt ORDER BY experiment_id, attempt`,
    [experimentIds, metric, maxPoints],
  );
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
