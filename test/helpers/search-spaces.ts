// Search spaces the sampler tests share.
import type { SearchSpace } from '../../core/spec';

/** One knob of every kind: log and linear floats, log and linear ints, a categorical. */
export const MIXED_SPACE: SearchSpace = {
  lr: { type: 'float', low: 1e-5, high: 1, log: true },
  dropout: { type: 'float', low: 0, high: 0.5, log: false },
  layers: { type: 'int', low: 1, high: 8, log: false },
  width: { type: 'int', low: 16, high: 1024, log: true },
  act: { type: 'categorical', choices: ['relu', 'gelu', 'tanh', 'silu'] },
};
