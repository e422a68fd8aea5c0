// What the platform knows of a trainer's knobs without running it: the built-in trainer's (charlm) defaults, which
// that trainer fills into run.json params (trainers/charlm/train-params.ts) and the platform records as a search
// baseline's params and reads as a run's length. A command of one's own has none: its params are the spec's.
import type { Params } from './spec';
import type { TrainerCommandSpec } from './trainer-program';

/** The built-in trainer's knobs when run.json does not set them (documented in trainers/charlm/train-params.ts). */
export const CHARLM_DEFAULT_PARAMS = {
  context: 4,
  embed: 16,
  hidden: 64,
  lr: 0.01,
  steps: 1000,
  batchSize: 64,
  weightDecay: 0.0001,
  lrWarmup: 0,
  lrSchedule: 'cosine' as 'cosine' | 'constant',
  logEvery: 25,
};

/**
 * The params of a search's baseline experiment, the reference every held-out score is compared with: the built-in
 * trainer's defaults at zero steps, or zero steps of a warm start's base params; a command of one's own gets none.
 */
export function baselineParams(command: TrainerCommandSpec, base?: Params): Params {
  if (command !== 'builtin') return {};
  return base ? { ...base, steps: 0 } : { ...CHARLM_DEFAULT_PARAMS, steps: 0 };
}

/** A run's length when neither its params nor the spec's fixed knobs say: the built-in trainer's default, else 0 (unknown). */
export function defaultSteps(command: TrainerCommandSpec): number {
  return command === 'builtin' ? CHARLM_DEFAULT_PARAMS.steps : 0;
}
