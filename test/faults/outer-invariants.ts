// The invariants of an outer-loop run: one row per iteration, each with its dataset version, inner loop and gate
// decision; no critique, example or decision twice; the promoted model named for comparison with a fault-free run.
import type { Pool } from 'pg';

export interface OuterIterationFacts {
  iteration: number;
  status: string;
  innerLoopId: string;
  datasetHash: string | undefined;
  gateAccepted: boolean | undefined;
}

export interface OuterFacts {
  iterations: OuterIterationFacts[];
  /** The production checkpoint at the end, as `i${iteration}:${experiment}@step-N` (stable across runs). */
  promoted: string | undefined;
}

export async function checkOuterLoop(pg: Pool, campaignId: string, expected: number, v: string[]): Promise<OuterFacts> {
  const its = (
    await pg.query(
      `SELECT id, iteration, status, dataset_version_id, inner_loop_id, decision_id FROM outer_iterations WHERE campaign_id = $1 ORDER BY iteration`,
      [campaignId],
    )
  ).rows;
  if (its.map((i) => i.iteration).join(',') !== Array.from({ length: expected }, (_, i) => i + 1).join(','))
    v.push(`outer_iterations: iterations ${its.map((i) => i.iteration).join(',') || 'none'}, expected 1..${expected}`);
  const facts: OuterIterationFacts[] = [];
  for (const it of its) {
    if (!['promoted', 'rejected', 'no-candidate'].includes(it.status))
      v.push(`outer iteration ${it.id}: status ${it.status} after the loop ended`);
    const ds = it.dataset_version_id
      ? (await pg.query(`SELECT content_hash FROM dataset_versions WHERE id = $1`, [it.dataset_version_id])).rows[0]
      : undefined;
    if (!ds) v.push(`outer iteration ${it.id}: dataset version ${it.dataset_version_id ?? '(none)'} not stored`);
    const gate = (await pg.query(`SELECT accepted FROM decisions WHERE id = $1`, [`${it.id}/gate`])).rows[0];
    if (it.status !== 'no-candidate' && !gate) v.push(`outer iteration ${it.id}: no gate decision ${it.id}/gate`);
    if (gate && it.decision_id !== `${it.id}/gate`)
      v.push(`outer iteration ${it.id}: decision_id ${it.decision_id}, expected ${it.id}/gate`);
    if (!it.inner_loop_id) v.push(`outer iteration ${it.id}: no inner loop`);
    facts.push({
      iteration: it.iteration,
      status: it.status,
      innerLoopId: it.inner_loop_id,
      datasetHash: ds?.content_hash,
      gateAccepted: gate?.accepted,
    });
  }
  // Decisions: the gate of each iteration and the selection of each inner loop, nothing else and nothing twice.
  const want = new Set(its.flatMap((it) => [`${it.id}/gate`, `${it.inner_loop_id}/select`]));
  const decided = (await pg.query(`SELECT id FROM decisions WHERE campaign_id = $1`, [campaignId])).rows.map((r) => r.id as string);
  for (const id of decided) if (!want.has(id)) v.push(`decision ${id}: not one of the iterations' gate or selection decisions`);
  // Ids are deterministic, so a repeated step shows as the same source critiqued twice or the same text kept twice.
  const dupCritiques = (
    await pg.query(
      `SELECT outer_iteration_id, source_kind, source_id, count(*)::int AS n FROM critiques WHERE campaign_id = $1 GROUP BY 1, 2, 3 HAVING count(*) > 1`,
      [campaignId],
    )
  ).rows;
  for (const d of dupCritiques) v.push(`critiques: ${d.source_kind} ${d.source_id} critiqued ${d.n} times in ${d.outer_iteration_id}`);
  const dupExamples = (
    await pg.query(
      `SELECT dataset_version_id, source, source_ref, count(*)::int AS n FROM examples WHERE source = 'critique' GROUP BY 1, 2, 3 HAVING count(*) > 1`,
    )
  ).rows;
  for (const d of dupExamples) v.push(`examples: ${d.source_ref} became ${d.n} examples in ${d.dataset_version_id}`);
  const prod = (
    await pg.query(
      `SELECT c.production_checkpoint_id AS id, k.experiment_id, k.step FROM campaigns c LEFT JOIN checkpoints k ON k.id = c.production_checkpoint_id WHERE c.id = $1`,
      [campaignId],
    )
  ).rows[0];
  const owner = its.find((it) => prod?.experiment_id?.startsWith(`${it.inner_loop_id}/`));
  const promoted = prod?.id
    ? owner
      ? `i${owner.iteration}:${prod.experiment_id.split('/').pop()}@step-${prod.step}`
      : `(not from this run) ${prod.id}`
    : undefined;
  return { iterations: facts, promoted };
}
