// The built-in task's search space and default configuration. Ranges are chosen so the choice matters:
// on a log scale a learning rate too low learns nothing in the fixed step budget and one too high wrecks the
// model (public bits per byte from about 3.0 at the best settings to above 5.5 at either end of `lr`), context
// and width trade off against the fixed budget, and the costliest corner still trains in about 13 s of one core.
import type { Params, SearchSpace } from '../spec';
import { DEFAULT_TRAIN_PARAMS } from '../charlm/train-params';

/** Searched knobs; the rest (`steps`, `batchSize`, schedule) stay at BUILTIN_DEFAULT_PARAMS unless fixed in the spec. */
export const BUILTIN_SEARCH_SPACE: SearchSpace = {
  lr: { type: 'float', low: 1e-4, high: 0.3, log: true },
  hidden: { type: 'int', low: 16, high: 160, log: true },
  context: { type: 'int', low: 1, high: 8, log: false },
  embed: { type: 'int', low: 4, high: 24, log: true },
  weightDecay: { type: 'float', low: 1e-6, high: 0.1, log: true },
};

/**
 * The trainer's defaults: 1000 steps of 64 windows (64 K predicted bytes), about 3 s on one slow core, from
 * 6.6 to about 3.4 public bits per byte. The search space's best corner reaches about 3.0 in the same steps.
 */
export const BUILTIN_DEFAULT_PARAMS: Params = { ...DEFAULT_TRAIN_PARAMS };
