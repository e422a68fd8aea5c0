// A small seeded PRNG (mulberry32) for the built-in model: weight init and training-window sampling.
// Its whole state is one uint32, saved in every checkpoint so a resumed run draws the same windows.

export class Rng {
  private s: number;

  constructor(state: number) {
    this.s = state >>> 0;
  }

  /** An Rng whose state is a hash of the seed and a stream name, so streams of one seed do not overlap. */
  static derive(seed: number, stream: string): Rng {
    let h = (Math.imul(seed | 0, 0x9e3779b1) ^ 0x85ebca6b) >>> 0;
    for (let i = 0; i < stream.length; i++) h = Math.imul(h ^ stream.charCodeAt(i), 0x01000193) >>> 0;
    h ^= h >>> 16;
    h = Math.imul(h, 0x7feb352d);
    h ^= h >>> 15;
    return new Rng(h >>> 0);
  }

  /** The state to store; `new Rng(state)` continues the sequence exactly. */
  get state(): number {
    return this.s;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Standard normal (Box-Muller; two draws per value, no cached spare, so the state stays one number). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
}
