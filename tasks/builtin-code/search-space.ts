// The built-in task's search space and default configuration. Ranges are chosen so the choice matters: in the
// fixed budget of 1000 steps a learning rate too low learns almost nothing and one too high wrecks the model
// (public bits per byte about 3.0 at the best settings, 5.5 to 5.8 at either end of `lr`, 4.1 at context 1 and
// 3.5 at context 8), and the costliest corner (context 8, embed 24, hidden 128) trains in about 8-10 s of one core.
import type { Params, SearchSpace } from '../../core/spec';
import { CHARLM_DEFAULT_PARAMS } from '../../core/trainer-defaults';

/** Searched knobs; the rest (`steps`, `batchSize`, schedule) stay at BUILTIN_DEFAULT_PARAMS unless fixed in the spec. */
export const BUILTIN_SEARCH_SPACE: SearchSpace = {
  lr: { type: 'float', low: 1e-4, high: 0.3, log: true },
  hidden: { type: 'int', low: 16, high: 128, log: true },
  context: { type: 'int', low: 1, high: 8, log: false },
  embed: { type: 'int', low: 4, high: 24, log: true },
  weightDecay: { type: 'float', low: 1e-6, high: 0.1, log: true },
};

/**
 * The trainer's defaults: 1000 steps of 64 windows (64 K predicted bytes), about 3-4 s of one slow core, from
 * 6.6 to about 3.4 public bits per byte. The best of the search space reaches about 3.0 in the same steps.
 */
export const BUILTIN_DEFAULT_PARAMS: Params = { ...CHARLM_DEFAULT_PARAMS };
