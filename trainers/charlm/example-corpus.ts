// The examples path of the built-in trainer, free of I/O: a dataset version's examples (train.jsonl) held as one
// array of token ids, and the draw of a training window from them. An example is drawn in proportion to its weight
// (0: never), then a target uniformly among its completion bytes and the end of the completion; the context is the
// bytes of prompt + completion before the target, BOS-padded at the example's start, as `predict` sees a prompt.
// A window trains one target, so an example's share of the loss is its weight's share of the total, whatever its
// length (the job contract's per-example weight; a long example is not worth more draws than a short one).
// The end of the completion is trained with BOS as its target: greedy decoding stops there, so `predict` answers
// with the completion alone. Prompt bytes are never a target.
import type { Rng } from '../../core/stream-rng';
import { promptAndCompletion, type ExampleLine } from '../../core/dataset/example-line';
import { NonRetryableError } from '../../core/errors';
import { BOS_ID, encodeText } from '../../formats/charlm/vocab';

/** The examples cannot train anything: none has a weight above 0 and a completion. */
export class NoTrainableExamplesError extends NonRetryableError {}

export interface ExampleCorpus {
  /** Every example's prompt + completion ids, back to back. */
  readonly ids: Uint8Array;
  /** Example i spans ids[starts[i]] .. ids[starts[i + 1] - 1]; length = examples + 1. */
  readonly starts: Int32Array;
  /** Where example i's completion starts (starts[i] + prompt bytes). */
  readonly completionStarts: Int32Array;
  /** The examples that can be drawn (weight > 0, completion not empty), in file order. */
  readonly drawable: Int32Array;
  /** Running sums of the drawable examples' weights: drawable[k] is drawn when a uniform u × total falls below cum[k]. */
  readonly cumWeights: Float64Array;
}

/** Collects examples one at a time into growing arrays, so a large file never holds one object per example. */
export class ExampleCorpusBuilder {
  private ids = new Uint8Array(1 << 16);
  private size = 0;
  private starts: number[] = [0];
  private completionStarts: number[] = [];
  private weights: number[] = [];

  /** Adds one example (a train.jsonl line), rendered as prompt + completion by the shared chat template. */
  add(example: ExampleLine): void {
    const { prompt, completion } = promptAndCompletion(example);
    const p = encodeText(prompt);
    const c = encodeText(completion);
    this.reserve(p.length + c.length);
    this.ids.set(p, this.size);
    this.completionStarts.push(this.size + p.length);
    this.ids.set(c, this.size + p.length);
    this.size += p.length + c.length;
    this.starts.push(this.size);
    this.weights.push(example.weight);
  }

  get count(): number {
    return this.weights.length;
  }

  /** The corpus; throws NoTrainableExamplesError when no example can be drawn. */
  finish(): ExampleCorpus {
    const drawable: number[] = [];
    const cum: number[] = [];
    let total = 0;
    for (let i = 0; i < this.weights.length; i++) {
      if (!(this.weights[i] > 0) || this.completionStarts[i] === this.starts[i + 1]) continue;
      total += this.weights[i];
      drawable.push(i);
      cum.push(total);
    }
    if (drawable.length === 0) {
      throw new NoTrainableExamplesError(
        this.weights.length === 0
          ? 'the dataset has no examples'
          : `none of the dataset's ${this.weights.length} examples has both a weight above 0 and a completion to learn`,
      );
    }
    return {
      ids: this.ids.slice(0, this.size),
      starts: Int32Array.from(this.starts),
      completionStarts: Int32Array.from(this.completionStarts),
      drawable: Int32Array.from(drawable),
      cumWeights: Float64Array.from(cum),
    };
  }

  private reserve(extra: number): void {
    if (this.size + extra <= this.ids.length) return;
    let cap = this.ids.length * 2;
    while (cap < this.size + extra) cap *= 2;
    const grown = new Uint8Array(cap);
    grown.set(this.ids.subarray(0, this.size));
    this.ids = grown;
  }
}

/** One training target: the example drawn and the position predicted (its end, starts[example + 1], predicts BOS). */
export interface DrawnTarget {
  example: number;
  pos: number;
}

/** Draws an example in proportion to its weight (binary search of the running sums), then a target in its completion. */
export function drawTarget(corpus: ExampleCorpus, rng: Rng): DrawnTarget {
  const cum = corpus.cumWeights;
  const u = rng.next() * cum[cum.length - 1];
  let lo = 0;
  let hi = cum.length - 1; // rounding can put u at the total: the last drawable example then
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cum[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  const example = corpus.drawable[lo];
  const first = corpus.completionStarts[example];
  // Completion bytes first..end-1, then the end itself.
  const pos = first + rng.int(corpus.starts[example + 1] - first + 1);
  return { example, pos };
}

/**
 * Fills window b: the target at `pos` (BOS at the example's end) and the `C` ids before it inside the example,
 * BOS where the example has not started yet or where a short context (`keep` < C) leaves them out.
 */
export function fillExampleWindow(
  corpus: ExampleCorpus,
  t: DrawnTarget,
  C: number,
  keep: number,
  contexts: Int32Array,
  targets: Int32Array,
  b: number,
): void {
  const start = corpus.starts[t.example];
  targets[b] = t.pos < corpus.starts[t.example + 1] ? corpus.ids[t.pos] : BOS_ID;
  for (let j = 0; j < C; j++) {
    const src = t.pos - C + j;
    contexts[b * C + j] = src >= start && j >= C - keep ? corpus.ids[src] : BOS_ID;
  }
}
