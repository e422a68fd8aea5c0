// The hybrid proposer's hand-over rule, a pure function of the loop's past batches (so a retried or replayed
// proposal decides the same): the agent proposes until `handOverAfter` of its batches in a row bring no new best,
// then the sampler proposes alone (the agent's proposals still compete in its ranking), and the agent gets the
// batch back as soon as one of its proposals sets a new best.

export type ProposerMode = 'agent' | 'sampler';

export interface PastBatch {
  mode: ProposerMode;
  /** An experiment the agent proposed in this batch beat every experiment before the batch. */
  agentImproved: boolean;
}

export function nextProposerMode(batches: readonly PastBatch[], handOverAfter: number): { mode: ProposerMode; why: string } {
  let mode: ProposerMode = 'agent';
  let dry = 0;
  let why = 'the agent proposes first';
  for (const b of batches) {
    mode = b.mode;
    if (b.mode === 'agent') {
      dry = b.agentImproved ? 0 : dry + 1;
      if (dry >= handOverAfter) {
        mode = 'sampler';
        why = `${dry} agent batches in a row without a new best (agents.handOverAfter ${handOverAfter}): the sampler proposes alone`;
        dry = 0;
      } else {
        why = b.agentImproved
          ? 'the agent set a new best in the last batch'
          : `${dry} agent batch(es) without a new best, of ${handOverAfter} allowed`;
      }
    } else if (b.agentImproved) {
      mode = 'agent';
      dry = 0;
      why = "an agent proposal that won the sampler's ranking set a new best: the agent proposes again";
    } else {
      why = 'the sampler keeps the batch: no agent proposal set a new best';
    }
  }
  return { mode, why };
}
