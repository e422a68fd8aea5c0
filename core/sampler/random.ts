// Random search: the baseline every model-based proposer must beat, and the start-up phase of TPE.
import type { Params, SearchSpace } from '../spec';
import type { Rng } from './rng';
import { distinctBatch, type ProposalLabel, type Sampler, type SamplerContext } from './sampler';
import { sampleParams } from './space';

/** One configuration drawn uniformly from the space (log scales honoured); the history is deliberately ignored. */
export function proposeRandom(space: SearchSpace, rng: Rng): Params {
  return sampleParams(space, rng);
}

/** `innerLoop.proposer: random`: uniform draws throughout, never a configuration the campaign has seen. */
export class RandomSampler implements Sampler {
  propose(ctx: SamplerContext): Params[] {
    return distinctBatch(ctx, () => proposeRandom(ctx.space, ctx.rng));
  }

  describe(): ProposalLabel {
    return { proposer: 'random', hypothesis: 'random search: uniform draw' };
  }
}
