// The knobs of the built-in trainer, read from run.json `params`: each documented with its default,
// then one `resolveTrainParams` step that checks them and fills the defaults (a bad knob is named in the error).
import type { CharLmHyper } from '../../formats/charlm/char-lm';
import { NonRetryableError } from '../../core/errors';
import { CHARLM_DEFAULT_PARAMS } from '../../core/trainer-defaults';

export interface TrainParams extends CharLmHyper {
  /** Previous bytes the model sees. @default 4 */
  context: number;
  /** Embedding width per byte. @default 16 */
  embed: number;
  /** Hidden tanh units. @default 64 */
  hidden: number;
  /** Peak Adam learning rate. @default 0.01 */
  lr: number;
  /** Training steps (one minibatch each); 0 writes the untrained model as the only checkpoint. @default 1000 */
  steps: number;
  /** Windows (predicted bytes) per step. @default 64 */
  batchSize: number;
  /** Decoupled (AdamW) weight decay on the weights, per unit of learning rate. @default 0.0001 */
  weightDecay: number;
  /** Steps of linear learning-rate warm-up from 0. @default 0 */
  lrWarmup: number;
  /** `cosine` decays to a tenth of `lr` at the last step; `constant` keeps it. @default "cosine" */
  lrSchedule: 'cosine' | 'constant';
  /** Steps between metric lines. @default 25 */
  logEvery: number;
}

export const DEFAULT_TRAIN_PARAMS: TrainParams = { ...CHARLM_DEFAULT_PARAMS };

/** A run.json `params` object the trainer cannot use; the message names the knob. */
export class InvalidTrainParamsError extends NonRetryableError {}

type Check = (v: unknown) => string | null;
const int =
  (lo: number, hi: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi ? null : `must be an integer from ${lo} to ${hi}`;
const positive: Check = (v) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? null : 'must be a positive number');
const nonNegative: Check = (v) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? null : 'must be a non-negative number');
const oneOf =
  (...choices: string[]): Check =>
  (v) =>
    typeof v === 'string' && choices.includes(v) ? null : `must be one of ${choices.map((c) => JSON.stringify(c)).join(', ')}`;

const CHECKS: Record<keyof TrainParams, Check> = {
  context: int(1, 64),
  embed: int(1, 256),
  hidden: int(1, 4096),
  lr: positive,
  steps: int(0, 10_000_000),
  batchSize: int(1, 4096),
  weightDecay: nonNegative,
  lrWarmup: int(0, 10_000_000),
  lrSchedule: oneOf('cosine', 'constant'),
  logEvery: int(1, 10_000_000),
};

/** Checks `raw` and fills defaults; unknown knobs are refused so a typo in a search space is not silently ignored. */
export function resolveTrainParams(raw: Record<string, unknown>): TrainParams {
  for (const key of Object.keys(raw)) {
    if (!(key in CHECKS)) {
      throw new InvalidTrainParamsError(`params.${key} is not a charlm knob (knobs: ${Object.keys(CHECKS).join(', ')})`);
    }
  }
  const out: Record<string, unknown> = { ...DEFAULT_TRAIN_PARAMS };
  for (const [key, check] of Object.entries(CHECKS)) {
    if (raw[key] === undefined) continue;
    const problem = check(raw[key]);
    if (problem) throw new InvalidTrainParamsError(`params.${key} ${problem} (got ${JSON.stringify(raw[key])})`);
    out[key] = raw[key];
  }
  return out as unknown as TrainParams;
}

/** The learning rate at 1-based step `t`: linear warm-up, then cosine to lr/10 or constant. */
export function learningRate(p: TrainParams, t: number): number {
  if (t <= p.lrWarmup) return (p.lr * t) / p.lrWarmup;
  if (p.lrSchedule === 'constant') return p.lr;
  const span = Math.max(1, p.steps - p.lrWarmup);
  const progress = Math.min(1, (t - p.lrWarmup) / span);
  return p.lr * (0.1 + 0.45 * (1 + Math.cos(Math.PI * progress)));
}
