// The built-in trainer's loop, free of I/O: minibatch AdamW on random windows of one training text, or of a
// dataset's examples (loss on the completions only, see example-corpus.ts), with callbacks for metric lines and
// checkpoints. Every random draw comes from one seeded Rng whose state is
// checkpointed, so a run resumed from a checkpoint is bit-for-bit the run that was never interrupted.
import type { MetricLine } from '../../core/job-contract';
import { Adam } from './adam';
import { CharLm } from '../../formats/charlm/char-lm';
import type { CharLmCheckpoint } from '../../formats/charlm/checkpoint';
import { Rng } from '../../core/stream-rng';
import { learningRate, resolveTrainParams } from './train-params';
import { BOS_ID, encodeBytes, encodeText } from '../../formats/charlm/vocab';
import { NonRetryableError } from '../../core/errors';
import { drawTarget, fillExampleWindow, type ExampleCorpus } from './example-corpus';

export { InvalidTrainParamsError, resolveTrainParams, DEFAULT_TRAIN_PARAMS, type TrainParams } from './train-params';

/** The training text or starting checkpoint cannot be used with these params (too short, another model shape). */
export class TrainingInputError extends NonRetryableError {}

/** The loss stopped being a finite number (a learning rate far too high). */
export class TrainingDivergedError extends NonRetryableError {}

export interface TrainOptions {
  /** The training text, as a string or its UTF-8 bytes (a file read as a Buffer); every byte is a target. */
  text?: string | Uint8Array;
  /** The dataset's examples instead of a text: only completion bytes (and each completion's end) are targets. */
  examples?: ExampleCorpus;
  /** run.json `params`; checked by `resolveTrainParams`. */
  params: Record<string, unknown>;
  /** Seeds the initial weights and the window sampler. */
  seed: number;
  /** Continue this run from its checkpoint: weights, Adam moments, step and sampler state. @default null */
  resume?: CharLmCheckpoint | null;
  /** Start a new run from these weights (fresh optimizer, step 0); ignored when resuming. @default null */
  base?: CharLmCheckpoint | null;
  /** Write a checkpoint every N steps, and always after the last one. @default 0 (only at the end) */
  checkpointEvery?: number;
  onMetrics?: (line: MetricLine) => void;
  onCheckpoint?: (c: CharLmCheckpoint) => void;
  /** Clock for tokens_per_s, in milliseconds. @default Date.now */
  now?: () => number;
}

export interface TrainResult {
  model: CharLm;
  checkpoint: CharLmCheckpoint;
  /** Mean bits per target byte (per completion byte on the examples path) over the last logging window. */
  finalLoss: number;
}

/**
 * A fraction of windows keep only a random number of their most recent bytes (BOS before), so the model
 * also learns to predict from a short context, as it must at the start of an eval chunk.
 */
const SHORT_CONTEXT_RATE = 1 / 16;

export function trainCharLm(opts: TrainOptions): TrainResult {
  const p = resolveTrainParams(opts.params);
  const sampleBatch = windowSampler(opts, p.context);
  const hyper = { context: p.context, embed: p.embed, hidden: p.hidden };
  const start = opts.resume ?? null;
  const init = start ?? opts.base ?? null;
  if (init && (init.hyper.context !== hyper.context || init.hyper.embed !== hyper.embed || init.hyper.hidden !== hyper.hidden)) {
    throw new TrainingInputError(`the checkpoint's model ${JSON.stringify(init.hyper)} does not match params ${JSON.stringify(hyper)}`);
  }
  const model = init ? CharLm.fromParams(hyper, Float32Array.from(init.params)) : CharLm.create(hyper, opts.seed);
  const adam = new Adam(
    model.layout.total,
    {},
    start?.adam ? { m: Float32Array.from(start.adam.m), v: Float32Array.from(start.adam.v) } : undefined,
  );
  const rng = start ? new Rng(start.rngState) : Rng.derive(opts.seed, 'charlm-windows');
  const grad = model.zerosLike();
  const now = opts.now ?? Date.now;
  const every = opts.checkpointEvery ?? 0;
  const C = p.context;
  const B = p.batchSize;
  const contexts = new Int32Array(B * C);
  const targets = new Int32Array(B);
  const snapshot = (step: number): CharLmCheckpoint => ({
    hyper,
    step,
    params: Float32Array.from(model.params),
    adam: { m: Float32Array.from(adam.m), v: Float32Array.from(adam.v) },
    rngState: rng.state,
    train: { ...p },
  });

  let step = start?.step ?? 0;
  let windowNats = 0;
  let windowTokens = 0;
  let windowStart = now();
  let finalLoss = NaN;
  while (step < p.steps) {
    sampleBatch(B, rng, contexts, targets);
    grad.fill(0);
    const nats = model.accumulateGradient(contexts, targets, B, grad, 1 / B);
    if (!Number.isFinite(nats)) throw new TrainingDivergedError(`training diverged at step ${step + 1} (loss is not finite)`);
    step += 1;
    const lr = learningRate(p, step);
    adam.step(model.params, grad, step, lr, p.weightDecay, model.layout.decayed);
    windowNats += nats;
    windowTokens += B;
    if (step % p.logEvery === 0 || step === p.steps) {
      const t = now();
      finalLoss = windowNats / windowTokens / Math.LN2;
      opts.onMetrics?.({
        step,
        loss: finalLoss,
        lr,
        tokens: step * B,
        tokens_per_s: windowTokens / Math.max(1e-3, (t - windowStart) / 1000),
      });
      windowNats = 0;
      windowTokens = 0;
      windowStart = t;
    }
    if ((every > 0 && step % every === 0) || step === p.steps) opts.onCheckpoint?.(snapshot(step));
  }
  // A fresh run of zero steps still leaves its (untrained) model behind: the baseline of a campaign.
  if (!start && p.steps === 0) opts.onCheckpoint?.(snapshot(0));
  return { model, checkpoint: snapshot(step), finalLoss };
}

type WindowSampler = (count: number, rng: Rng, contexts: Int32Array, targets: Int32Array) => void;

function windowSampler(opts: TrainOptions, C: number): WindowSampler {
  if (opts.examples && opts.text !== undefined) throw new TrainingInputError('give the trainer a text or examples, not both');
  if (opts.examples) {
    const corpus = opts.examples;
    return (count, rng, contexts, targets) => {
      for (let b = 0; b < count; b++) {
        const t = drawTarget(corpus, rng);
        fillExampleWindow(corpus, t, C, shortContext(rng, C), contexts, targets, b);
      }
    };
  }
  if (opts.text === undefined) throw new TrainingInputError('the trainer needs a text or examples');
  const ids = typeof opts.text === 'string' ? encodeText(opts.text) : encodeBytes(opts.text);
  if (ids.length < 2) throw new TrainingInputError('the training text needs at least 2 bytes');
  return (count, rng, contexts, targets) => sampleTextBatch(ids, C, count, rng, contexts, targets);
}

/** How many of the C context bytes a window keeps: C, or for SHORT_CONTEXT_RATE of windows a random fewer. */
function shortContext(rng: Rng, C: number): number {
  return rng.next() < SHORT_CONTEXT_RATE ? rng.int(C) : C;
}

/** Fills `count` windows: a uniform target position in the text and the `C` ids before it. */
function sampleTextBatch(ids: Uint8Array, C: number, count: number, rng: Rng, contexts: Int32Array, targets: Int32Array): void {
  for (let b = 0; b < count; b++) {
    const pos = 1 + rng.int(ids.length - 1);
    const keep = shortContext(rng, C);
    targets[b] = ids[pos];
    for (let j = 0; j < C; j++) {
      const src = pos - C + j;
      contexts[b * C + j] = src >= 0 && j >= C - keep ? ids[src] : BOS_ID;
    }
  }
}
