// AdamW for the built-in model: Adam moments plus decoupled weight decay on the weights (not the biases).
// The moments live in Float32Arrays beside the parameters and travel in every checkpoint.

export interface AdamOptions {
  /** @default 0.9 */
  beta1?: number;
  /** @default 0.99 (a short run needs the second moment to warm up quickly) */
  beta2?: number;
  /** @default 1e-8 */
  eps?: number;
}

export class Adam {
  readonly m: Float32Array;
  readonly v: Float32Array;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly eps: number;

  /** `m` and `v` may come from a checkpoint; they are used, not copied. */
  constructor(size: number, opts: AdamOptions = {}, moments?: { m: Float32Array; v: Float32Array }) {
    this.beta1 = opts.beta1 ?? 0.9;
    this.beta2 = opts.beta2 ?? 0.99;
    this.eps = opts.eps ?? 1e-8;
    this.m = moments?.m ?? new Float32Array(size);
    this.v = moments?.v ?? new Float32Array(size);
    if (this.m.length !== size || this.v.length !== size) throw new Error(`adam: moments of length ${this.m.length}, ${size} expected`);
  }

  /**
   * One update. `t` is the 1-based step (for bias correction, so a resumed run passes the global step);
   * weight decay applies to params[0..decayed) only.
   */
  step(params: Float32Array, grad: Float32Array, t: number, lr: number, weightDecay: number, decayed: number): void {
    const { m, v, beta1, beta2, eps } = this;
    const c1 = 1 / (1 - Math.pow(beta1, t));
    const c2 = 1 / (1 - Math.pow(beta2, t));
    const shrink = 1 - lr * weightDecay;
    for (let i = 0; i < params.length; i++) {
      const g = grad[i];
      const mi = beta1 * m[i] + (1 - beta1) * g;
      const vi = beta2 * v[i] + (1 - beta2) * g * g;
      m[i] = mi;
      v[i] = vi;
      const p = i < decayed ? params[i] * shrink : params[i];
      params[i] = p - (lr * (mi * c1)) / (Math.sqrt(vi * c2) + eps);
    }
  }
}
