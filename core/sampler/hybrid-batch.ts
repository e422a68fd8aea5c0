// The hybrid proposer's batch from its candidates, a pure function: the agent's proposals minus near-duplicates of
// the history and of each other, ranked by TPE's acquisition over the same history, then, when the agent leads,
// filled by the sampler's batch, or, when the sampler leads, every candidate competing in one ranking.
import type { Params, SearchSpace } from '../spec';
import type { ProposerMode } from './hybrid-mode';
import { isNearDuplicate, validateParams, type Trial } from './space';
import { tpeScore } from './tpe';

export interface Candidate {
  params: Params;
  hypothesis: string;
  /** `agent`, or the built-in proposer's name. */
  proposer: string;
}

export interface HybridBatchOptions {
  mode: ProposerMode;
  space: SearchSpace;
  history: readonly Trial[];
  agent: Candidate[];
  builtin: Candidate[];
  count: number;
  /** The near-duplicate distance (agents.nearDuplicate). */
  tol: number;
}

export function hybridBatch(o: HybridBatchOptions): { batch: Candidate[]; notes: string[] } {
  const notes: string[] = [];
  const fresh: Candidate[] = [];
  const past = o.history.map((t) => t.params);
  for (const a of o.agent) {
    const twin = [...past, ...fresh.map((f) => f.params)].find((p) => isNearDuplicate(a.params, p, o.space, o.tol));
    if (twin) notes.push(`dropped a near-duplicate of ${JSON.stringify(twin)}: ${JSON.stringify(a.params)}`);
    else fresh.push(a);
  }
  const score = (p: Params) => (validateParams(o.space, p).length === 0 ? tpeScore(o.space, o.history, p) : -Infinity);
  const ranked = (xs: Candidate[]) =>
    xs
      .map((e, i) => ({ e, i, s: score(e.params) }))
      .sort((a, b) => b.s - a.s || a.i - b.i)
      .map((x) => x.e);
  let batch: Candidate[];
  if (o.mode === 'agent') {
    const lead = ranked(fresh).slice(0, o.count);
    const fill = o.builtin.filter((b) => !lead.some((a) => isNearDuplicate(a.params, b.params, o.space, o.tol)));
    batch = [...lead, ...fill].slice(0, o.count);
  } else {
    batch = ranked([...fresh, ...o.builtin]).slice(0, o.count);
  }
  notes.push(
    `${batch.filter((c) => c.proposer === 'agent').length} of ${batch.length} from the agent (${fresh.length} valid, new proposals ranked by the TPE model)`,
  );
  return { batch, notes };
}
