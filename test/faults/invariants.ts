// The invariants of an inner loop, read from PostgreSQL, the run directories and the workflow histories: nothing
// lost, nothing duplicated. Each violation is one line naming the row or file.
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import { readMetrics } from '../../activities/training/metrics-stream';
import { METRICS_FILE } from '../../core/job-contract';
import { ExperimentHistories, type HistoryEvent } from './experiment-histories';

export interface ExperimentFacts {
  /** `${loop}:${index}`: the loop's place in the run (0 for an inner-loop run; the outer iteration − 1) and the experiment's. */
  key: string;
  params: unknown;
  status: string;
  attempts: number;
}

export interface InnerLoopFacts {
  experiments: ExperimentFacts[];
  /** The best experiment's index, as the loop returned it. */
  best: string | undefined;
  runs: { id: string; runDir: string }[];
}

export async function checkInnerLoop(pg: Pool, client: Client, innerLoopId: string, loop: number, v: string[]): Promise<InnerLoopFacts> {
  const exps = (
    await pg.query(`SELECT id, index, params, status FROM experiments WHERE inner_loop_id = $1 ORDER BY index, id`, [innerLoopId])
  ).rows;
  const runs = (
    await pg.query(
      `SELECT r.id, r.experiment_id, r.attempt, r.launches, r.run_dir, r.status, r.verdict FROM training_runs r JOIN experiments e ON e.id = r.experiment_id WHERE e.inner_loop_id = $1`,
      [innerLoopId],
    )
  ).rows;
  const histories = new ExperimentHistories(client);
  for (const e of exps) {
    if (!['succeeded', 'failed', 'pruned', 'timed_out'].includes(e.status))
      v.push(`experiment ${e.id}: status ${e.status} after the loop ended`);
    // One training job per attempt the history records: the experiment's own, or its loop's when it ran inline.
    const launches = (await histories.of(e.id)).filter(isLaunch).length;
    const mine = runs.filter((r) => r.experiment_id === e.id);
    if (mine.length !== launches) v.push(`experiment ${e.id}: ${mine.length} training_runs rows, history schedules ${launches} launches`);
    const attempts = mine.map((r) => r.attempt).sort((a, b) => a - b);
    if (attempts.some((a, i) => a !== i + 1)) v.push(`experiment ${e.id}: attempts ${attempts.join(',')} are not 1..n`);
  }
  v.push(...verdictViolations(exps, runs));
  for (const r of runs) {
    if (r.launches !== 1) v.push(`run ${r.id}: launched ${r.launches} times`);
    // Every complete metrics line is stored exactly once (the primary key forbids twice; count finds missing ones).
    const file = readMetrics(path.join(r.run_dir, METRICS_FILE), 0);
    const want = new Set(file.points.map((p) => `${p.name}@${p.step}`));
    const have = (await pg.query(`SELECT name, step FROM metric_points WHERE run_id = $1`, [r.id])).rows.map((p) => `${p.name}@${p.step}`);
    const stored = new Set(have);
    const missing = [...want].filter((k) => !stored.has(k));
    const extra = have.filter((k) => !want.has(k));
    if (missing.length)
      v.push(`run ${r.id} (${r.status}): ${missing.length} metric points in metrics.jsonl missing from PostgreSQL (first ${missing[0]})`);
    if (extra.length) v.push(`run ${r.id}: ${extra.length} metric points not in metrics.jsonl (first ${extra[0]})`);
  }
  // One public eval result per succeeded experiment, none for others.
  const evals = (
    await pg.query(`SELECT experiment_id, split, count(*)::int AS n FROM eval_results WHERE experiment_id LIKE $1 GROUP BY 1, 2`, [
      `${innerLoopId}/%`,
    ])
  ).rows;
  for (const e of exps.filter((x) => !/baseline$/.test(x.id))) {
    const pub = evals.find((r) => r.experiment_id === e.id && r.split === 'public');
    if (e.status === 'succeeded' && pub?.n !== 1) v.push(`experiment ${e.id}: ${pub?.n ?? 0} public eval results, expected 1`);
    if (e.status !== 'succeeded' && pub) v.push(`experiment ${e.id}: ${e.status} but has a public eval result`);
  }
  const result = (await client.workflow.getHandle(innerLoopId).result()) as { best?: { experimentId: string } };
  return {
    experiments: exps.map((e) => ({
      key: `${loop}:${e.index}`,
      params: e.params,
      status: e.status,
      attempts: runs.filter((r) => r.experiment_id === e.id).length,
    })),
    best: result.best?.experimentId.split('/').pop(),
    runs: runs.map((r) => ({ id: r.id, runDir: r.run_dir })),
  };
}

export interface VerdictRow {
  id: string;
  experiment_id: string;
  attempt: number;
  status: string;
  verdict: { status: string } | null;
}

/**
 * A stop Flywheel decided (prune, time limit, cancel) is final: the run is recorded as decided, and its experiment
 * never trains again (no later attempt) and ends with that status. What a reattached awaitTraining that ignored the
 * stored verdict would break: it finds its own kill, calls it a failure, and the experiment relaunches the run.
 */
export function verdictViolations(exps: { id: string; status: string }[], runs: VerdictRow[]): string[] {
  const out: string[] = [];
  for (const r of runs.filter((x) => x.verdict)) {
    const decided = r.verdict!.status;
    if (r.status !== decided) out.push(`run ${r.id}: verdict ${decided} stored before the kill, but the run is recorded ${r.status}`);
    const again = runs.filter((x) => x.experiment_id === r.experiment_id && x.attempt > r.attempt).map((x) => x.id);
    if (again.length) out.push(`run ${r.id}: ${decided} by verdict, yet its experiment trained again (${again.join(', ')})`);
    const e = exps.find((x) => x.id === r.experiment_id);
    if (!again.length && e && e.status !== decided)
      out.push(`experiment ${e.id}: its last run ${r.id} was ${decided} by verdict, but the experiment ended ${e.status}`);
  }
  return out;
}

/** Every accepted feedback event of `campaignId` stored once; nothing stored that was not sent. */
export async function checkFeedback(pg: Pool, campaignId: string, accepted: Set<string>, sent: Set<string>, v: string[]): Promise<void> {
  const stored = new Set(
    (await pg.query(`SELECT id FROM feedback_events WHERE campaign_id = $1`, [campaignId])).rows.map((r) => r.id as string),
  );
  for (const id of accepted) if (!stored.has(id)) v.push(`feedback ${id}: accepted (2xx) but not stored`);
  for (const id of stored) if (!sent.has(id)) v.push(`feedback ${id}: stored but never sent`);
}

/** One launch per launchTraining (before FEWER_ROUND_TRIPS) or runTraining (after) a history schedules. */
const isLaunch = (ev: HistoryEvent) =>
  ['launchTraining', 'runTraining'].includes(ev.activityTaskScheduledEventAttributes?.activityType?.name ?? '');
