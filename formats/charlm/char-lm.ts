// The built-in code model: a byte-level MLP language model (Bengio et al. 2003). The `context` previous
// token ids are embedded, concatenated, passed through one tanh hidden layer and a softmax over the vocab.
// Forward and backward are written by hand over one flat Float32Array, so Adam and checkpoints see one vector.
import { BOS_ID, VOCAB_SIZE } from './vocab';
import { Rng } from '../../core/stream-rng';

export interface CharLmHyper {
  /** Previous bytes the model sees. */
  context: number;
  /** Embedding width per byte. */
  embed: number;
  /** Hidden units (tanh). */
  hidden: number;
}

/** Where each tensor starts in the flat parameter vector; weights first, biases last (biases are not decayed). */
export interface CharLmLayout {
  /** [vocab][embed] */
  emb: number;
  /** [context*embed][hidden] */
  w1: number;
  /** [hidden][vocab] */
  w2: number;
  /** [hidden] */
  b1: number;
  /** [vocab] */
  b2: number;
  /** Parameters before `b1`: the ones weight decay applies to. */
  decayed: number;
  total: number;
}

export function layoutOf(h: CharLmHyper): CharLmLayout {
  const V = VOCAB_SIZE;
  const emb = 0;
  const w1 = emb + V * h.embed;
  const w2 = w1 + h.context * h.embed * h.hidden;
  const b1 = w2 + h.hidden * V;
  const b2 = b1 + h.hidden;
  return { emb, w1, w2, b1, b2, decayed: b1, total: b2 + V };
}

/** Rows computed together: each weight loaded once serves four examples (about twice the speed in V8). */
const R = 4;

/** Scratch buffers for one block of R rows; reused so a training step allocates nothing. */
class Scratch {
  /** Inputs: R rows of context*embed. */
  readonly x: Float64Array;
  /** Hidden activations, R rows of hidden. */
  readonly h: Float64Array;
  /** Logits, R rows of vocab. */
  readonly z: Float64Array;
  /** Softmax probabilities, then (in training) the gradient of the loss with respect to the logits. */
  readonly p: Float64Array;
  readonly dh: Float64Array;
  readonly dx: Float64Array;
  /** log Σ exp(z) per row. */
  readonly lz = new Float64Array(R);
  /** Context ids of each row, for the embedding gradient. */
  readonly ctx: Int32Array;
  /** The log-probabilities `nextLogProbs` returns. */
  readonly out = new Float64Array(VOCAB_SIZE);
  constructor(h: CharLmHyper) {
    const ce = h.context * h.embed;
    this.x = new Float64Array(R * ce);
    this.h = new Float64Array(R * h.hidden);
    this.z = new Float64Array(R * VOCAB_SIZE);
    this.p = new Float64Array(R * VOCAB_SIZE);
    this.dh = new Float64Array(R * h.hidden);
    this.dx = new Float64Array(R * ce);
    this.ctx = new Int32Array(R * h.context);
  }
}

export class CharLm {
  readonly vocab = VOCAB_SIZE;
  readonly layout: CharLmLayout;
  private readonly s: Scratch;
  private readonly emb: Float32Array;
  private readonly w1: Float32Array;
  private readonly w2: Float32Array;
  private readonly b1: Float32Array;
  private readonly b2: Float32Array;

  private constructor(
    readonly hyper: CharLmHyper,
    readonly params: Float32Array,
  ) {
    this.layout = layoutOf(hyper);
    if (params.length !== this.layout.total) {
      throw new Error(`charlm: ${params.length} parameters given, ${this.layout.total} expected for ${JSON.stringify(hyper)}`);
    }
    const L = this.layout;
    this.emb = params.subarray(L.emb, L.w1);
    this.w1 = params.subarray(L.w1, L.w2);
    this.w2 = params.subarray(L.w2, L.b1);
    this.b1 = params.subarray(L.b1, L.b2);
    this.b2 = params.subarray(L.b2, L.total);
    this.s = new Scratch(hyper);
  }

  /**
   * A fresh model. Embeddings ~ N(0, 1), W1 scaled for tanh (5/3 / sqrt(fan-in)), W2 small so the untrained
   * model is close to uniform (log2(vocab) ≈ 6.6 bits per byte) instead of confidently wrong.
   */
  static create(h: CharLmHyper, seed: number): CharLm {
    const m = new CharLm(h, new Float32Array(layoutOf(h).total));
    const rng = Rng.derive(seed, 'charlm-init');
    for (let i = 0; i < m.emb.length; i++) m.emb[i] = rng.normal();
    const g1 = 5 / 3 / Math.sqrt(h.context * h.embed);
    for (let i = 0; i < m.w1.length; i++) m.w1[i] = rng.normal() * g1;
    const g2 = 0.1 / Math.sqrt(h.hidden);
    for (let i = 0; i < m.w2.length; i++) m.w2[i] = rng.normal() * g2;
    return m;
  }

  /** A model over existing weights (a decoded checkpoint); the array is used, not copied. */
  static fromParams(h: CharLmHyper, params: Float32Array): CharLm {
    return new CharLm(h, params);
  }

  /** A zeroed vector shaped like the parameters (gradients, Adam moments). */
  zerosLike(): Float32Array {
    return new Float32Array(this.layout.total);
  }

  /**
   * Natural-log probabilities of the token after ids[0..end) (the context is ids[end-context..end), BOS before
   * the start). Returns internal scratch: copy it before the next call.
   */
  nextLogProbs(ids: ArrayLike<number>, end: number): Float64Array {
    // Only row 0 is read; the other rows hold an earlier (finite) context and cost a little wasted work.
    this.gatherAt(ids, end, 0);
    this.forward();
    const { z, lz, out } = this.s;
    for (let v = 0; v < VOCAB_SIZE; v++) out[v] = z[v] - lz[0];
    return out;
  }

  /** ln p(next | ids[0..end)). */
  logProbNext(ids: ArrayLike<number>, end: number, next: number): number {
    return this.nextLogProbs(ids, end)[next];
  }

  /** Σ -ln p(ids[i] | ids[0..i)) for i in [from, to): the summed cross-entropy in nats of a span. */
  crossEntropy(ids: ArrayLike<number>, from: number, to: number): number {
    const { z, lz } = this.s;
    let nats = 0;
    for (let i = from; i < to; i += R) {
      const n = Math.min(R, to - i);
      for (let r = 0; r < R; r++) this.gatherAt(ids, i + Math.min(r, n - 1), r);
      this.forward();
      for (let r = 0; r < n; r++) nats += lz[r] - z[r * VOCAB_SIZE + ids[i + r]];
    }
    return nats;
  }

  /**
   * Adds the gradient of the summed cross-entropy of a batch, times `scale`, into `grad`, and returns the summed
   * cross-entropy in nats. `contexts` holds `count` rows of `context` ids; `targets` the id each row predicts.
   */
  accumulateGradient(contexts: Int32Array, targets: Int32Array, count: number, grad: Float32Array, scale: number): number {
    const C = this.hyper.context;
    const { ctx, z, p, lz } = this.s;
    const V = VOCAB_SIZE;
    let nats = 0;
    for (let b0 = 0; b0 < count; b0 += R) {
      const n = Math.min(R, count - b0);
      // A short last block repeats its last row with zero weight, so the unrolled loops need no tail.
      for (let r = 0; r < R; r++) {
        const src = (b0 + Math.min(r, n - 1)) * C;
        for (let j = 0; j < C; j++) ctx[r * C + j] = contexts[src + j];
      }
      this.embedRows();
      this.forward();
      for (let r = 0; r < R; r++) {
        const row = r * V;
        if (r >= n) {
          p.fill(0, row, row + V);
          continue;
        }
        const y = targets[b0 + r];
        // From the logits, not log(p): a diverged model may put p[y] below the smallest double.
        nats += lz[r] - z[row + y];
        p[row + y] -= 1;
        for (let v = 0; v < V; v++) p[row + v] *= scale;
      }
      this.backward(grad);
    }
    return nats;
  }

  /** Fills row r's context ids with the `context` ids before `end` (BOS before 0) and embeds them. */
  private gatherAt(ids: ArrayLike<number>, end: number, r: number): void {
    const C = this.hyper.context;
    const { ctx } = this.s;
    for (let j = 0; j < C; j++) {
      const pos = end - C + j;
      ctx[r * C + j] = pos >= 0 ? ids[pos] : BOS_ID;
    }
    this.embedRow(r);
  }

  private embedRows(): void {
    for (let r = 0; r < R; r++) this.embedRow(r);
  }

  private embedRow(r: number): void {
    const { context: C, embed: E } = this.hyper;
    const { x, ctx } = this.s;
    const emb = this.emb;
    const base = r * C * E;
    for (let j = 0; j < C; j++) {
      const row = ctx[r * C + j] * E;
      for (let e = 0; e < E; e++) x[base + j * E + e] = emb[row + e];
    }
  }

  /** For the R rows of x: h = tanh(b1 + x·W1), z = b2 + h·W2, p = softmax(z), lz = log Σ exp(z). */
  private forward(): void {
    const { context: C, embed: E, hidden: H } = this.hyper;
    const V = VOCAB_SIZE;
    const CE = C * E;
    const { x, h, z, p, lz } = this.s;
    const { w1, w2, b1, b2 } = this;
    for (let r = 0; r < R; r++) for (let k = 0; k < H; k++) h[r * H + k] = b1[k];
    for (let i = 0; i < CE; i++) {
      const x0 = x[i],
        x1 = x[CE + i],
        x2 = x[2 * CE + i],
        x3 = x[3 * CE + i];
      const base = i * H;
      for (let k = 0; k < H; k++) {
        const w = w1[base + k];
        h[k] += x0 * w;
        h[H + k] += x1 * w;
        h[2 * H + k] += x2 * w;
        h[3 * H + k] += x3 * w;
      }
    }
    for (let i = 0; i < R * H; i++) h[i] = Math.tanh(h[i]);
    for (let r = 0; r < R; r++) for (let v = 0; v < V; v++) z[r * V + v] = b2[v];
    for (let k = 0; k < H; k++) {
      const h0 = h[k],
        h1 = h[H + k],
        h2 = h[2 * H + k],
        h3 = h[3 * H + k];
      const base = k * V;
      for (let v = 0; v < V; v++) {
        const w = w2[base + v];
        z[v] += h0 * w;
        z[V + v] += h1 * w;
        z[2 * V + v] += h2 * w;
        z[3 * V + v] += h3 * w;
      }
    }
    for (let r = 0; r < R; r++) {
      const row = r * V;
      let max = -Infinity;
      for (let v = 0; v < V; v++) if (z[row + v] > max) max = z[row + v];
      let sum = 0;
      for (let v = 0; v < V; v++) {
        const e = Math.exp(z[row + v] - max);
        p[row + v] = e;
        sum += e;
      }
      for (let v = 0; v < V; v++) p[row + v] /= sum;
      lz[r] = max + Math.log(sum);
    }
  }

  /** With p holding dLoss/dz for the R rows, adds every parameter's gradient into `grad`. */
  private backward(grad: Float32Array): void {
    const { context: C, embed: E, hidden: H } = this.hyper;
    const V = VOCAB_SIZE;
    const CE = C * E;
    const L = this.layout;
    const { x, h, p, dh, dx, ctx } = this.s;
    const { w1, w2 } = this;
    // Output layer: dW2 += hᵀ·dz, db2 += Σ dz, dh = (dz·W2ᵀ) ⊙ (1 - h²).
    for (let v = 0; v < V; v++) grad[L.b2 + v] += p[v] + p[V + v] + p[2 * V + v] + p[3 * V + v];
    for (let k = 0; k < H; k++) {
      const h0 = h[k],
        h1 = h[H + k],
        h2 = h[2 * H + k],
        h3 = h[3 * H + k];
      const base = k * V;
      const g = L.w2 + base;
      let a0 = 0,
        a1 = 0,
        a2 = 0,
        a3 = 0;
      for (let v = 0; v < V; v++) {
        const d0 = p[v],
          d1 = p[V + v],
          d2 = p[2 * V + v],
          d3 = p[3 * V + v];
        const w = w2[base + v];
        grad[g + v] += h0 * d0 + h1 * d1 + h2 * d2 + h3 * d3;
        a0 += w * d0;
        a1 += w * d1;
        a2 += w * d2;
        a3 += w * d3;
      }
      dh[k] = a0 * (1 - h0 * h0);
      dh[H + k] = a1 * (1 - h1 * h1);
      dh[2 * H + k] = a2 * (1 - h2 * h2);
      dh[3 * H + k] = a3 * (1 - h3 * h3);
      grad[L.b1 + k] += dh[k] + dh[H + k] + dh[2 * H + k] + dh[3 * H + k];
    }
    // Hidden layer: dW1 += xᵀ·dh, dx = dh·W1ᵀ.
    for (let i = 0; i < CE; i++) {
      const x0 = x[i],
        x1 = x[CE + i],
        x2 = x[2 * CE + i],
        x3 = x[3 * CE + i];
      const base = i * H;
      const g = L.w1 + base;
      let a0 = 0,
        a1 = 0,
        a2 = 0,
        a3 = 0;
      for (let k = 0; k < H; k++) {
        const d0 = dh[k],
          d1 = dh[H + k],
          d2 = dh[2 * H + k],
          d3 = dh[3 * H + k];
        const w = w1[base + k];
        grad[g + k] += x0 * d0 + x1 * d1 + x2 * d2 + x3 * d3;
        a0 += w * d0;
        a1 += w * d1;
        a2 += w * d2;
        a3 += w * d3;
      }
      dx[i] = a0;
      dx[CE + i] = a1;
      dx[2 * CE + i] = a2;
      dx[3 * CE + i] = a3;
    }
    // Embeddings: scatter dx back to the rows each context used.
    for (let r = 0; r < R; r++) {
      for (let j = 0; j < C; j++) {
        const row = L.emb + ctx[r * C + j] * E;
        const src = r * CE + j * E;
        for (let e = 0; e < E; e++) grad[row + e] += dx[src + e];
      }
    }
  }
}
