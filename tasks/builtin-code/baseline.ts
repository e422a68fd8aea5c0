// The untrained baseline of the built-in task: the default architecture, zero training steps.
import type { Params } from '../../core/spec';
import { BUILTIN_DEFAULT_PARAMS } from './search-space';

export const BASELINE_PARAMS: Params = { ...(BUILTIN_DEFAULT_PARAMS as Params), steps: 0 };
