// All the checks of one fault run, and the comparison with the fault-free run of the same seed: the same rows in
// every table whose rows a retry does not add to, the same decisions and the same promoted model, unless a
// recorded retry explains the difference.
import type { Client } from '@temporalio/client';
import type { Pool } from 'pg';
import type { BackendKind, StartedCampaign } from './fault-campaign';
import { checkFeedback, checkInnerLoop, type ExperimentFacts } from './invariants';
import { activeSlurmJobs, slurmJobViolations } from './leftovers';
import { checkOuterLoop, type OuterFacts } from './outer-invariants';

export interface RunFacts {
  experiments: ExperimentFacts[];
  best: (string | undefined)[];
  outer: OuterFacts | undefined;
  /** Rows per table a retry does not change (training runs, metric points and checkpoints it does). */
  counts: Record<string, number>;
}

/** Tables compared row for row in number with the fault-free run (feedback is excluded: only the faulted run writes it). */
const COUNTED = [
  'experiments',
  'eval_results',
  'dataset_versions',
  'examples',
  'critiques',
  'decisions',
  'outer_iterations',
  'inner_loops',
];

export interface FeedbackSent {
  campaignId: string;
  sent: Set<string>;
  accepted: Set<string>;
}

export async function checkRun(
  pg: Pool,
  client: Client,
  run: StartedCampaign,
  backend: BackendKind,
  home: string,
  feedback: FeedbackSent,
): Promise<{ violations: string[]; facts: RunFacts }> {
  const v: string[] = [];
  const outer = run.iterations ? await checkOuterLoop(pg, run.campaignId, run.iterations, v) : undefined;
  const innerIds = outer ? outer.iterations.map((i) => i.innerLoopId).filter(Boolean) : [run.workflowId];
  const experiments: ExperimentFacts[] = [];
  const best: (string | undefined)[] = [];
  const runs: { id: string; runDir: string }[] = [];
  for (const [loop, id] of innerIds.entries()) {
    const f = await checkInnerLoop(pg, client, id, loop, v);
    experiments.push(...f.experiments);
    best.push(f.best);
    runs.push(...f.runs);
  }
  await checkFeedback(pg, feedback.campaignId, feedback.accepted, feedback.sent, v);
  if (backend === 'slurm') {
    v.push(...(await slurmJobViolations(runs)));
    for (const job of await activeSlurmJobs(home)) v.push(`Slurm job still active after the loop ended: ${job}`);
  }
  const counts: Record<string, number> = {};
  for (const t of COUNTED) counts[t] = Number((await pg.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n);
  return { violations: v, facts: { experiments, best, outer, counts } };
}

/** Differences between a faulted run and the fault-free run of the same seed that no recorded retry explains. */
export function unexplainedDifferences(faulted: RunFacts, clean: RunFacts): string[] {
  const out: string[] = [];
  const retried = faulted.experiments.some((d) => d.attempts > 1);
  for (const c of clean.experiments) {
    const f = faulted.experiments.find((d) => d.key === c.key);
    if (!f) out.push(`experiment ${c.key}: in the fault-free run, missing under faults`);
    else if (JSON.stringify(f.params) !== JSON.stringify(c.params) && !retried) out.push(`experiment ${c.key}: params differ`);
    else if (f.status !== c.status && f.attempts <= 1)
      out.push(`experiment ${c.key}: ${f.status} under faults, ${c.status} without, and no retry recorded`);
  }
  for (const f of faulted.experiments)
    if (!clean.experiments.some((c) => c.key === f.key)) out.push(`experiment ${f.key}: under faults only`);
  if (JSON.stringify(faulted.best) !== JSON.stringify(clean.best) && !retried)
    out.push(`best ${faulted.best.join(',')} under faults, ${clean.best.join(',')} without`);
  // An experiment whose every attempt was killed fails, and so has no public eval result: that many fewer rows are
  // explained by its recorded retries. Any other difference in number is a row lost or written twice.
  const failedByRetries = clean.experiments.filter((c) => {
    const f = faulted.experiments.find((d) => d.key === c.key);
    return c.status === 'succeeded' && f && f.status !== 'succeeded' && f.attempts > 1;
  }).length;
  for (const [t, n] of Object.entries(clean.counts)) {
    const explained = t === 'eval_results' ? failedByRetries : 0;
    if (faulted.counts[t] !== n - explained)
      out.push(
        `${t}: ${faulted.counts[t]} rows under faults, ${n} without${explained ? ` (${explained} fewer explained by experiments that failed after retries)` : ''}`,
      );
  }
  for (const c of clean.outer?.iterations ?? []) {
    const f = faulted.outer?.iterations.find((i) => i.iteration === c.iteration);
    if (!f) continue; // reported by the outer invariants
    if (f.datasetHash !== c.datasetHash)
      out.push(
        `outer iteration ${c.iteration}: dataset version content differs (${f.datasetHash?.slice(0, 12)} vs ${c.datasetHash?.slice(0, 12)})`,
      );
    if ((f.status !== c.status || f.gateAccepted !== c.gateAccepted) && !retried)
      out.push(
        `outer iteration ${c.iteration}: ${f.status} (gate ${f.gateAccepted}) under faults, ${c.status} (gate ${c.gateAccepted}) without`,
      );
  }
  if (faulted.outer?.promoted !== clean.outer?.promoted && !retried)
    out.push(`promoted ${faulted.outer?.promoted} under faults, ${clean.outer?.promoted} without`);
  return out;
}
