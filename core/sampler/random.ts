// Random search: the baseline every model-based proposer must beat, and the start-up phase of TPE.
import type { Params, SearchSpace } from '../spec';
import type { Rng } from './rng';
import { sampleParams } from './space';

/** One configuration drawn uniformly from the space (log scales honoured); the history is deliberately ignored. */
export function proposeRandom(space: SearchSpace, rng: Rng): Params {
  return sampleParams(space, rng);
}
