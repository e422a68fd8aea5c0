// Seeds campaign `bench` for the dashboard bench straight into PostgreSQL with generate_series: one inner loop of N
// experiments, one training run each with P loss points, 20 outer iterations and dataset versions, 1,000 decisions.
import type { DbHandle } from '../../db/client';

export const DASHBOARD_LOOP = 'bench/inner/1';
const LOOP = DASHBOARD_LOOP;

export async function seedDashboard(db: DbHandle, experiments: number, points: number): Promise<void> {
  const q = (text: string, params: unknown[] = []) => db.pool.query(text, params);
  await q(
    'INSERT INTO campaigns (id, spec, spec_hash) VALUES (\'bench\', \'{"name":"bench","selection":{"metric":"exact_match","mode":"max"}}\', \'x\')',
  );
  await q("INSERT INTO datasets (id, campaign_id, name) VALUES ('bench/code', 'bench', 'code')");
  await q(`INSERT INTO dataset_versions (id, dataset_id, path, content_hash, counts_by_source)
    SELECT 'bench/code@v' || i, 'bench/code', '/tmp', md5(i::text), jsonb_build_object('base', 1000, 'feedback', i * 10) FROM generate_series(0, 19) i`);
  await q(`INSERT INTO outer_iterations (id, campaign_id, iteration, workflow_id, trigger, status, dataset_version_id, inner_loop_id, summary, finished_at)
    SELECT 'bench/outer/i' || i, 'bench', i, 'bench/outer/x', 'schedule', CASE WHEN i % 3 = 0 THEN 'rejected' ELSE 'promoted' END, 'bench/code@v' || i, '${LOOP}',
      jsonb_build_object('reason', 'gate', 'heldout', jsonb_build_object('metric', 'exact_match', 'candidate', 0.3 + i * 0.01, 'incumbent', 0.3 + i * 0.009, 'production', 0.3 + i * 0.01)), now()
    FROM generate_series(1, 20) i`);
  await q(`INSERT INTO inner_loops (id, campaign_id, dataset_version_id, status) VALUES ('${LOOP}', 'bench', 'bench/code@v0', 'running')`);
  await q(
    `INSERT INTO experiments (id, campaign_id, inner_loop_id, index, dataset_version_id, params, hypothesis, proposer, status, public_score, heldout_score, started_at, finished_at, capacity_wait_seconds)
    SELECT '${LOOP}/e' || i, 'bench', '${LOOP}', i, 'bench/code@v0', jsonb_build_object('lr', random() / 100, 'hidden', 16 + i % 48), 'hypothesis ' || i, 'tpe',
      CASE WHEN i % 1000 = 0 THEN 'running' ELSE 'succeeded' END, random(), CASE WHEN i % 50 = 0 THEN random() END, now() - interval '1 hour', now(), random() * 10
    FROM generate_series(0, $1::int - 1) i`,
    [experiments],
  );
  await q(
    `INSERT INTO training_runs (id, experiment_id, attempt, backend, run_dir, status) SELECT '${LOOP}/e' || i || '/r1', '${LOOP}/e' || i, 1, 'local', '/tmp', 'succeeded' FROM generate_series(0, $1::int - 1) i`,
    [experiments],
  );
  await q(
    `INSERT INTO metric_points (run_id, name, step, value, "offset") SELECT '${LOOP}/e' || i || '/r1', 'loss', s, 5.0 / s + random() * 0.1, s * 40
    FROM generate_series(0, $1::int - 1) i, generate_series(1, $2::int) s`,
    [experiments, points],
  );
  await q(`INSERT INTO decisions (id, campaign_id, kind, experiment_id, rule, reason, figures, accepted)
    SELECT 'bench/d' || i, 'bench', CASE WHEN i % 2 = 0 THEN 'select' ELSE 'reject' END, '${LOOP}/e' || i, 'rule', 'reason ' || i, jsonb_build_object('delta', random()), i % 2 = 0 FROM generate_series(0, 999) i`);
  await q('ANALYZE');
}
